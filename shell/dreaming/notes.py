"""The daily notes as dreaming sees them: the index's units with their vectors, by day.

The files are chunked here the way the memory index chunks them (same units, same hashes as the
hit log's), and each unit's vector comes from dreaming's own cache (`vectors`): a sweep whose
vectors are all cached never opens the index, so it does not pay LanceDB's import (about 1 s of
every `cairn dream`). Units the cache lacks are taken from the index, and embedded only when the
index has not caught up with the file either. Each file is read once per sweep.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import TYPE_CHECKING

import numpy as np

from shell.dreaming.vectors import StatementVectors
from shell.events import SourceRef
from shell.memory.index.chunking import Chunk, chunk_markdown
from shell.memory.index.scan import read_memory_file, scan_memory_files
from shell.memory.paths import note_date

if TYPE_CHECKING:
    from shell.memory.index.memory_index import MemoryIndex


@dataclass(frozen=True)
class NoteUnit:
    """One unit of a memory file, its vector, and the note's date (None for MEMORY.md)."""

    chunk: Chunk
    vector: np.ndarray
    day: date | None

    @property
    def key(self) -> str:
        """The hit log's name for it: path and text hash."""
        return f"{self.chunk.path}#{self.chunk.hash[:12]}"

    @property
    def source(self) -> SourceRef:
        chunk = self.chunk
        return SourceRef(
            chunk.path,
            chunk.start_line,
            chunk.end_line,
            self.day.isoformat() if self.day else None,
        )


class Notes:
    """The memory files of one sweep: `index` chunks and, on a miss, vectors; `vectors` the
    cache of both units' and statements' vectors."""

    def __init__(self, index: MemoryIndex, vectors: StatementVectors) -> None:
        self._index = index
        self._vectors = vectors
        self._units: dict[str, list[NoteUnit]] = {}
        self._paths: list[str] | None = None

    def units(self, path: str) -> list[NoteUnit]:
        """Every unit of one file in line order."""
        if path not in self._units:
            read = read_memory_file(self._index.workspace, path)
            chunks = (
                chunk_markdown(
                    path,
                    read[0],
                    max_tokens=self._index.chunk_tokens,
                    context_tokens=self._index.context_tokens,
                )
                if read is not None
                else []
            )
            vectors = self._unit_vectors(path, chunks)
            day = note_date(path)
            self._units[path] = [NoteUnit(chunk, vectors[chunk.hash], day) for chunk in chunks]
        return self._units[path]

    def _unit_vectors(self, path: str, chunks: list[Chunk]) -> dict[str, np.ndarray]:
        found = self._vectors.kept(chunk.hash for chunk in chunks)
        missing = [chunk for chunk in chunks if chunk.hash not in found]
        if missing:
            indexed, matrix = self._index.file_units(path)
            rows = {chunk.hash: row for chunk, row in zip(indexed, matrix, strict=True)}
            found.update({c.hash: rows[c.hash] for c in missing if c.hash in rows})
            unindexed = [chunk for chunk in missing if chunk.hash not in found]
            if unindexed:
                embedded = self._index.embedder.embed([c.embed_text for c in unindexed])
                found.update(zip((c.hash for c in unindexed), embedded, strict=True))
            self._vectors.keep({c.hash: found[c.hash] for c in missing})
        return {key: np.asarray(vector, dtype=np.float32) for key, vector in found.items()}

    def dated(self, until: date, days: int) -> list[tuple[date, str]]:
        """The daily notes of the `days` days up to `until`, oldest first."""
        if self._paths is None:
            self._paths = list(scan_memory_files(self._index.workspace))
        since = until - timedelta(days=max(1, days) - 1)
        found = [(day, path) for path in self._paths if (day := note_date(path))]
        return sorted((day, path) for day, path in found if since <= day <= until)

    def in_days(self, until: date, days: int) -> list[NoteUnit]:
        return [unit for _, path in self.dated(until, days) for unit in self.units(path)]

    def find(self, path: str, unit_hash: str) -> NoteUnit | None:
        """The unit of `path` whose text hash starts with `unit_hash`, if it is still there."""
        if not unit_hash:
            return None
        return next((u for u in self.units(path) if u.chunk.hash.startswith(unit_hash)), None)


def similar_groups(units: list[NoteUnit], threshold: float) -> list[list[NoteUnit]]:
    """`units` grouped greedily by cosine ≥ `threshold` to each group's first unit, in order."""
    groups: list[list[NoteUnit]] = []
    heads: list[np.ndarray] = []
    for unit in units:
        if heads:
            cosines = np.stack(heads) @ unit.vector
            best = int(np.argmax(cosines))
            if float(cosines[best]) >= threshold:
                groups[best].append(unit)
                continue
        groups.append([unit])
        heads.append(unit.vector)
    return groups

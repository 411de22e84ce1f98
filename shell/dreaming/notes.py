"""The daily notes as dreaming sees them: the index's units with their vectors, by day.

Read through the memory index (`shell.memory.index`), so dreaming matches units the way recall
does and never re-embeds; each file's units are fetched once per sweep.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import TYPE_CHECKING

import numpy as np

from shell.events import SourceRef
from shell.memory.paths import note_date

if TYPE_CHECKING:
    from shell.memory.index.chunking import Chunk
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
    """The indexed memory files of one sweep."""

    def __init__(self, index: MemoryIndex) -> None:
        self._index = index
        self._units: dict[str, list[NoteUnit]] = {}

    def units(self, path: str) -> list[NoteUnit]:
        """Every unit of one file in line order."""
        if path not in self._units:
            chunks, vectors = self._index.file_units(path)
            day = note_date(path)
            self._units[path] = [
                NoteUnit(chunk, np.asarray(vector, dtype=np.float32), day)
                for chunk, vector in zip(chunks, vectors, strict=True)
            ]
        return self._units[path]

    def dated(self, until: date, days: int) -> list[tuple[date, str]]:
        """The daily notes of the `days` days up to `until`, oldest first."""
        since = until - timedelta(days=max(1, days) - 1)
        found = [(day, path) for path in self._index.paths() if (day := note_date(path))]
        return sorted((day, path) for day, path in found if since <= day <= until)

    def in_days(self, until: date, days: int) -> list[NoteUnit]:
        return [unit for _, path in self.dated(until, days) for unit in self.units(path)]

    def embed(self, texts: list[str]) -> np.ndarray:
        """Vectors of texts the index does not hold (unit-norm rows, one per text)."""
        if not texts:
            return np.zeros((0, self._index.embedder.dim), dtype=np.float32)
        return np.asarray(self._index.embedder.embed(texts), dtype=np.float32)

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

"""The vector leg's storage: every chunk vector of the live generation in one RAM matrix."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from shell.memory.index.chunking import Chunk


class VectorMatrix:
    """All chunk vectors as one in-memory float32 matrix, plus the chunks themselves.

    The vector leg of search is `matrix @ q` plus `argpartition`: about 8 ms at 100k chunks, where
    LanceDB's flat scan costs ~165 ms. Rows are removed by swapping in the last row and appended
    into spare capacity, so a sync updates it in place. Not thread-safe by itself: MemoryIndex
    guards it with a lock.
    """

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._matrix = np.zeros((0, dim), dtype=np.float32)
        self.ids: list[str] = []
        self.row_of: dict[str, int] = {}
        self.chunks: dict[str, Chunk] = {}
        self.ids_by_path: dict[str, list[str]] = {}
        self.ids_by_hash: dict[str, list[str]] = {}

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def matrix(self) -> np.ndarray:
        return self._matrix[: len(self.ids)]

    def reserve(self, rows: int) -> None:
        """Make room for `rows` rows in all, so adding up to that many copies nothing."""
        if rows <= len(self._matrix):
            return
        grown = np.zeros((max(rows, len(self._matrix) * 3 // 2, 64), self.dim), dtype=np.float32)
        grown[: len(self.ids)] = self._matrix[: len(self.ids)]
        self._matrix = grown

    def add(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None:
        """Append chunks with their vectors; a chunk whose id is present replaces that row."""
        if len(chunks) != len(vectors):
            raise ValueError(f"{len(chunks)} chunks but {len(vectors)} vectors")
        self.reserve(len(self.ids) + len(chunks))
        for chunk, vector in zip(chunks, vectors, strict=True):
            row = self.row_of.get(chunk.id)
            if row is None:
                row = len(self.ids)
                self.ids.append(chunk.id)
                self.row_of[chunk.id] = row
                self.ids_by_path.setdefault(chunk.path, []).append(chunk.id)
                self.ids_by_hash.setdefault(chunk.hash, []).append(chunk.id)
            self._matrix[row] = vector
            self.chunks[chunk.id] = chunk

    def remove_paths(self, paths: Iterable[str]) -> int:
        """Drop every row of these paths; returns how many rows went."""
        removed = 0
        for path in paths:
            for chunk_id in self.ids_by_path.pop(path, ()):
                row = self.row_of.pop(chunk_id)
                digest = self.chunks.pop(chunk_id).hash
                same_text = self.ids_by_hash[digest]
                same_text.remove(chunk_id)
                if not same_text:
                    del self.ids_by_hash[digest]
                last = len(self.ids) - 1
                if row != last:
                    moved = self.ids[last]
                    self._matrix[row] = self._matrix[last]
                    self.ids[row] = moved
                    self.row_of[moved] = row
                self.ids.pop()
                removed += 1
        return removed

    def vectors_for_hashes(self, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        """Copies of the vectors of any rows whose text has one of these hashes."""
        found: dict[str, np.ndarray] = {}
        for digest in hashes:
            if same_text := self.ids_by_hash.get(digest):
                found[digest] = self._matrix[self.row_of[same_text[0]]].copy()
        return found

    def top_k(self, query: np.ndarray, k: int) -> list[tuple[str, float]]:
        """The k rows with the highest cosine to `query` (rows are unit norm), best first."""
        count = len(self.ids)
        unit = _unit(query)
        if count == 0 or k <= 0 or unit is None:
            return []
        scores = self._matrix[:count] @ unit
        if k < count:
            best = np.argpartition(-scores, k - 1)[:k]
            best = best[np.argsort(-scores[best], kind="stable")]
        else:
            best = np.argsort(-scores, kind="stable")
        return [(self.ids[i], float(scores[i])) for i in best]

    def cosines(self, query: np.ndarray, ids: Iterable[str]) -> list[tuple[str, float]]:
        """The cosine of `query` with each of these rows (ids not present are left out)."""
        unit = _unit(query)
        rows = [
            (chunk_id, row) for chunk_id in ids if (row := self.row_of.get(chunk_id)) is not None
        ]
        if not rows or unit is None:
            return []
        scores = self._matrix[[row for _, row in rows]] @ unit
        return [(chunk_id, float(score)) for (chunk_id, _), score in zip(rows, scores, strict=True)]


def _unit(query: np.ndarray) -> np.ndarray | None:
    """`query` scaled to unit length as float32; None when it has no finite, non-zero length."""
    vector = np.asarray(query, dtype=np.float32)
    norm = float(np.linalg.norm(vector))
    if norm == 0.0 or not np.isfinite(norm):
        return None
    unit: np.ndarray = vector / norm
    return unit

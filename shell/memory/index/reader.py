"""The read side of the memory index: the live generation and the lookups searches make in it.

`IndexReader` holds the live generation behind a lock and answers every read a search makes: the
vector leg (cosine top-k over the in-memory matrix, or the cosine of given chunks), the keyword
leg (LanceDB's BM25 full-text index), chunks by id, and a file's units in line order. It never
writes. `MemoryIndex` (`shell.memory.index.memory_index`) extends it with opening, syncing,
rebuilding and wiping, and swaps generations in under the same lock, so every read sees the index
either before or after a sync's commit, never half of it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from shell.memory.index import store
from shell.memory.index.chunking import Chunk
from shell.memory.index.embed import Embedder
from shell.memory.index.terms import found_through_context, query_terms, stems
from shell.memory.index.writer import Generation


class KeywordSearchUnavailable(RuntimeError):
    """The keyword (BM25) leg cannot run: the full-text index is missing or unreadable.

    The vector leg is unaffected, and the next `MemoryIndex.sync` rebuilds the full-text index.
    The reason is also kept in `MemoryIndex.status()["last_error"]`.

    Attributes:
        reason: What failed, in words fit for a search result's `degraded_reason`.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class IndexReader:
    """Reads from the live generation of the index, under the lock that guards its swaps.

    Args:
        embedder: The index's embedder (its dim is the query vectors' and the matrix's).
    """

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self._lock = threading.RLock()  # the live generation: searches and commits
        self._generation: Generation | None = None
        self._needs_fts = False
        self._last_error: str | None = None

    @property
    def embedder(self) -> Embedder:
        return self._embedder

    def _ensure_open(self) -> None:
        """Called before every read; a subclass that opens the index lazily opens it here."""

    def vector_candidates(self, qvec: np.ndarray, k: int) -> list[tuple[str, float]]:
        """The k chunks nearest to a query vector.

        Returns:
            (chunk id, cosine similarity) pairs, best first; [] before the first sync.

        Raises:
            ValueError: `qvec` does not have the embedder's dimension.
        """
        query = np.asarray(qvec, dtype=np.float32).reshape(-1)
        if query.shape[0] != self._embedder.dim:
            raise ValueError(
                f"query vector has dim {query.shape[0]}, index has {self._embedder.dim}"
            )
        self._ensure_open()
        with self._lock:
            if self._generation is None:
                return []
            return self._generation.vectors.top_k(query, k)

    def vector_scores(self, qvec: np.ndarray, ids: Sequence[str]) -> list[tuple[str, float]]:
        """The cosine of a query vector with each of these chunks (unknown ids are left out)."""
        self._ensure_open()
        with self._lock:
            if self._generation is None:
                return []
            return self._generation.vectors.cosines(np.asarray(qvec, np.float32).reshape(-1), ids)

    def keyword_candidates(self, query: str, k: int) -> list[tuple[str, float]]:
        """The k best BM25 matches for the words of `query` (any word may match).

        A unit is read with the tail of the unit before it, but a match on that tail alone
        counts only when the unit continues that one's topic (`terms.found_through_context`).

        Returns:
            (chunk id, raw BM25 score) pairs, best first; [] when nothing matches, the query
            has no words, or nothing is indexed yet.

        Raises:
            KeywordSearchUnavailable: the full-text index cannot be searched; the next sync
                rebuilds it.
        """
        terms = query_terms(query)
        if not terms or k <= 0:
            return []
        self._ensure_open()
        with self._lock:
            generation = self._generation
            if generation is None:
                return []
            try:
                hits = store.fts_search(generation.chunks_table, terms, k)
            except Exception as exc:
                reason = f"keyword search failed: {type(exc).__name__}: {exc}"[:300]
                self._last_error = reason
                self._needs_fts = True  # the next sync rebuilds the full-text index
                raise KeywordSearchUnavailable(reason) from exc
            known = generation.vectors.chunks
            query_stems = stems(terms)
            return [
                (chunk_id, float(score))
                for chunk_id, score in hits
                if chunk_id in known and not found_through_context(known[chunk_id], query_stems)
            ]

    def chunks(self, ids: Sequence[str]) -> dict[str, Chunk]:
        """The chunks with these ids (ids no longer in the index are left out)."""
        self._ensure_open()
        with self._lock:
            if self._generation is None:
                return {}
            known = self._generation.vectors.chunks
            return {chunk_id: known[chunk_id] for chunk_id in ids if chunk_id in known}

    def paths(self) -> list[str]:
        """Every indexed file's workspace-relative path."""
        self._ensure_open()
        with self._lock:
            return [] if self._generation is None else list(self._generation.vectors.ids_by_path)

    def file_units(self, path: str) -> tuple[list[Chunk], np.ndarray]:
        """Every unit of one indexed file in line order, with their vectors (one row each)."""
        self._ensure_open()
        with self._lock:
            if self._generation is None:
                return [], np.zeros((0, self._embedder.dim), dtype=np.float32)
            matrix = self._generation.vectors
            ids = sorted(
                matrix.ids_by_path.get(path, ()),
                key=lambda i: (matrix.chunks[i].start_line, matrix.chunks[i].end_line),
            )
            return [matrix.chunks[i] for i in ids], matrix.matrix[[matrix.row_of[i] for i in ids]]

"""The embedding cache: every chunk text is embedded at most once per model.

Vectors are kept by chunk hash in a per-model table of the index's LanceDB store, so a rebuild,
a renamed file or a text that comes back embeds nothing that was embedded before. What the table
does not hold goes to the embedder in batches, and whatever was embedded is kept even when a sync
stops half-way. `IndexWriter` (`shell.memory.index.writer`) looks in RAM first and asks this cache
for the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from shell.memory.index import store
from shell.memory.index.chunking import Chunk
from shell.memory.index.embed import Embedder

EMBED_BATCH = 64
"""Texts per embedder call; progress is reported after each."""
KEEP_EVERY = 1024
"""Embedded texts are written to the cache table at least this often, so a sync killed half-way
(a crash, SIGKILL, a power cut) loses at most this many when it starts again: a rebuild of a
ten-year workspace resumes where it stopped instead of from zero."""


class EmbeddingFailed(RuntimeError):
    """The embedder raised; nothing was written, the index is as it was."""


class EmbeddingCache:
    """The cache table of one embedder's model in one index store, and the embedder behind it.

    Args:
        lance: The index's LanceDB store, which holds the cache table.
        embedder: Embeds what the table does not hold; its name picks the table.
    """

    def __init__(self, lance: store.LanceStore, embedder: Embedder) -> None:
        self._store = lance
        self._embedder = embedder
        self._table: Any = None
        self._hashes: set[str] | None = None  # hashes in the cache table, read lazily

    @property
    def is_open(self) -> bool:
        """True once the cache table is open (and until it is forgotten)."""
        return self._table is not None

    def open(self) -> None:
        """Open the cache table of the embedder's model (creating it if needed)."""
        self._table = self._store.cache_table(self._embedder.name)

    def missing(self, hashes: set[str]) -> int:
        """How many of these chunk hashes the cache table does not hold."""
        if self._hashes is None:
            self._hashes = store.cache_hashes(self._table)
        return len(hashes - self._hashes)

    def complete(
        self,
        chunks: Sequence[Chunk],
        found: dict[str, np.ndarray],
        on_batch: Callable[[int], None] | None,
    ) -> int:
        """Add to `found` a vector for every chunk hash it lacks: from the table, else embedded.

        Args:
            chunks: The chunks that need a vector.
            found: Vectors already known by chunk hash (from RAM); completed in place.
            on_batch: Called after each embedder call with how many texts were embedded so
                far (it may raise to stop, e.g. SyncCancelled; what was embedded is kept).

        Returns:
            How many texts were embedded.

        Raises:
            EmbeddingFailed: the embedder raised.
        """
        needed = {c.hash for c in chunks}
        if self._hashes is None:
            self._hashes = store.cache_hashes(self._table)
        if in_cache := (needed - found.keys()) & self._hashes:
            found.update(store.cache_lookup(self._table, in_cache, self._embedder.dim))
        texts = {c.hash: c.embed_text for c in chunks if c.hash not in found}
        hashes = list(texts)
        fresh: dict[str, np.ndarray] = {}
        unkept: dict[str, np.ndarray] = {}
        try:
            for start in range(0, len(hashes), EMBED_BATCH):
                batch = hashes[start : start + EMBED_BATCH]
                try:
                    vectors = self._embedder.embed([texts[h] for h in batch])
                except Exception as exc:
                    message = f"embedding failed: {type(exc).__name__}: {exc}"
                    raise EmbeddingFailed(message) from exc
                embedded = dict(zip(batch, np.asarray(vectors, dtype=np.float32), strict=True))
                fresh.update(embedded)
                unkept.update(embedded)
                if len(unkept) >= KEEP_EVERY:
                    self._keep(unkept)
                if on_batch is not None:
                    on_batch(len(fresh))
        finally:  # what was embedded is kept, even when the sync stops half-way
            self._keep(unkept)
        found.update(fresh)
        return len(fresh)

    def _keep(self, vectors: dict[str, np.ndarray]) -> None:
        """Write embedded vectors to the cache table (and forget them from `vectors`)."""
        if not vectors:
            return
        rows = store.cache_rows(list(vectors), np.stack(list(vectors.values())), self._embedder.dim)
        self._table.add(rows)
        self._hashes = (self._hashes or set()) | vectors.keys()
        vectors.clear()

    def salvage(self) -> Any | None:
        """The cache table's rows if they can still be read (before a wipe), else None."""
        return self._store.read_cache(self._embedder.name)

    def restore(self, salvaged: Any | None) -> None:
        """Put salvaged rows back after a wipe (nothing happens for None or no rows)."""
        if salvaged is not None and salvaged.num_rows:
            self._store.restore_cache(self._embedder.name, salvaged)

    def forget(self) -> None:
        """Drop the open table and the hash set read from it; `open` opens the table again."""
        self._table = None
        self._hashes = None

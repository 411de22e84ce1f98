"""The memory index: Markdown memory files, chunked and embedded, in LanceDB plus a RAM matrix.

The files are the truth; this index is derived data under `<workspace>/.cairn/index` and rebuilds
itself when it is missing, corrupt, or was built with another model or chunking. Sync is
incremental: only changed files are re-chunked and only text never embedded before (with this
model) reaches the embedder. The vector leg searches an in-memory matrix; the keyword leg uses
LanceDB's BM25 full-text index. A sync may run in one thread while searches run in others: a lock
makes every search see the index either before or after a sync's commit, never half of it.
"""

from __future__ import annotations

import re
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from shell.events import BaseEvent, IndexRebuilt, IndexSynced, IndexSyncProgress
from shell.memory import index_store as store
from shell.memory.chunking import Chunk, chunk_markdown
from shell.memory.embed import Embedder
from shell.memory.sync import FileRecord, SyncPlan, is_dirty, plan_sync

EMBED_BATCH = 64
"""Texts per embedder call; progress is reported after each."""
OPTIMIZE_MIN_ROWS = 500
"""Fold new rows into the FTS index once this many (or 5% of the table) are unindexed."""
_MAX_QUERY_TERMS = 32
_TERM = re.compile(r"\w+", re.UNICODE)

ProgressCallback = Callable[[IndexSyncProgress], None]


class EmbeddingFailed(RuntimeError):
    """The embedder raised; nothing was written, the index is as it was."""


def query_terms(query: str) -> list[str]:
    """Plain word tokens of a user query: no FTS syntax can pass through."""
    terms = [t for t in _TERM.findall(query) if len(t) <= 40]
    return list(dict.fromkeys(terms))[:_MAX_QUERY_TERMS]


@dataclass
class _Generation:
    """One complete set of tables and their in-memory mirror."""

    number: int
    chunks_table: Any
    files_table: Any
    vectors: store.VectorMatrix
    records: dict[str, FileRecord] = field(default_factory=dict)
    unindexed: int = 0


class MemoryIndex:
    """Hybrid-search storage over a workspace's MEMORY.md and memory/**/*.md."""

    def __init__(
        self,
        workspace: Path,
        embedder: Embedder,
        *,
        index_dir: Path | None = None,
        chunk_tokens: int = 400,
        overlap_tokens: int = 80,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        """Set the index up; nothing is opened or imported until first use.

        Args:
            workspace: The workspace root.
            embedder: Embeds chunk texts; its name and dim are part of the index identity.
            index_dir: Where the LanceDB folder lives (default `<workspace>/.cairn/index`).
            chunk_tokens: Target tokens per chunk.
            overlap_tokens: Tokens repeated between neighbouring chunks.
            clock: Returns "now" for `last_sync` (UTC wall clock by default).
        """
        self.workspace = Path(workspace)
        self._embedder = embedder
        self.index_dir = Path(index_dir) if index_dir else self.workspace / ".cairn" / "index"
        self.chunk_tokens = chunk_tokens
        self.overlap_tokens = overlap_tokens
        self._clock = clock or (lambda: datetime.now(UTC))
        self._store = store.LanceStore(self.index_dir, embedder.dim)
        self._lock = threading.RLock()  # the live generation: searches and commits
        self._write_lock = threading.Lock()  # one sync / rebuild / bulk load at a time
        self._opened = False
        self._generation: _Generation | None = None
        self._cache_table: Any = None
        self._cached_hashes: set[str] | None = None  # hashes in the cache table, read lazily
        self._pending_rebuild: str | None = None
        self._recorded_generation: int | None = None
        self._wipe_on_rebuild = False
        self._needs_fts = False
        self._last_sync: str | None = None
        self._last_error: str | None = None

    @property
    def embedder(self) -> Embedder:
        return self._embedder

    # --- identity and opening --------------------------------------------------------------

    def _identity(self, generation: int) -> dict[str, Any]:
        return {
            "schema_version": store.SCHEMA_VERSION,
            "model": self._embedder.name,
            "dim": self._embedder.dim,
            "chunk_tokens": self.chunk_tokens,
            "overlap_tokens": self.overlap_tokens,
            "generation": generation,
            "last_sync": self._last_sync,
        }

    def _identity_change(self, recorded: dict[str, Any]) -> str | None:
        wanted = self._identity(0)
        changes = [
            f"{key} {recorded.get(key)!r}->{wanted[key]!r}"
            for key in ("schema_version", "model", "dim", "chunk_tokens", "overlap_tokens")
            if recorded.get(key) != wanted[key]
        ]
        return "identity changed: " + ", ".join(changes) if changes else None

    def _ensure_open(self) -> None:
        if self._opened:
            return
        with self._lock:
            if not self._opened:
                self._open()
                self._opened = True

    def _open(self) -> None:
        if not self.index_dir.is_dir() or not any(self.index_dir.iterdir()):
            self._pending_rebuild = "missing"
            return
        try:
            identity = self._store.read_identity()
            if identity is None:
                raise ValueError(f"{store.IDENTITY_FILE} is missing")
            change = self._identity_change(identity)
            self._recorded_generation = int(identity["generation"])
            self._last_sync = identity.get("last_sync")
            self._cache_table = self._store.cache_table(self._embedder.name)
            if change is not None:
                self._pending_rebuild = change
                same_vectors = (identity.get("model"), identity.get("dim")) == (
                    self._embedder.name,
                    self._embedder.dim,
                )
                if not same_vectors or identity.get("schema_version") != store.SCHEMA_VERSION:
                    return  # the old vectors are useless to this embedder: search nothing
            self._generation = self._load_generation(int(identity["generation"]))
            self._store.drop_other_generations(self._generation.number)
        except Exception as exc:
            self._generation = None
            self._pending_rebuild = f"corrupt: {type(exc).__name__}: {exc}"[:300]
            self._wipe_on_rebuild = True

    def _load_generation(self, number: int) -> _Generation:
        chunks_table, files_table = self._store.open_generation(number)
        chunks, vectors = store.load_chunks(chunks_table, self._embedder.dim)
        matrix = store.VectorMatrix(self._embedder.dim)
        matrix.add(chunks, vectors)
        generation = _Generation(
            number, chunks_table, files_table, matrix, store.load_files(files_table)
        )
        try:
            generation.unindexed = store.unindexed_rows(chunks_table)
        except Exception:
            self._needs_fts = True
        return generation

    # --- sync ----------------------------------------------------------------------------

    def sync(
        self, *, trigger: str = "manual", progress: ProgressCallback | None = None
    ) -> list[BaseEvent]:
        """Bring the index up to date with the memory files.

        Rebuilds first when the index is missing, corrupt or of another identity. Otherwise only
        changed files are re-chunked, and only chunk texts never embedded with this model are
        embedded. Deleted and renamed files' rows go.

        Args:
            trigger: Why: session_start, search, watch, manual (reported in IndexSynced).
            progress: Called with IndexSyncProgress as files are chunked and texts embedded.

        Returns:
            `[IndexRebuilt]` if it rebuilt, then `[IndexSynced]`.

        Raises:
            EmbeddingFailed: The embedder raised; nothing was written.
        """
        with self._write_lock:
            started = time.perf_counter()
            self._ensure_open()
            if self._pending_rebuild is None and self._generation is not None:
                try:
                    return [self._sync_incremental(self._generation, trigger, progress, started)]
                except EmbeddingFailed:
                    raise
                except Exception as exc:  # the store broke under us: start over from the files
                    self._pending_rebuild = f"corrupt: {type(exc).__name__}: {exc}"[:300]
                    self._wipe_on_rebuild = True
            return self._rebuild_locked(
                self._pending_rebuild or "manual", trigger, progress, started
            )

    def rebuild(self, reason: str = "manual") -> list[BaseEvent]:
        """Rebuild from the files into a new generation and swap it in.

        Embeddings come from the cache, so a rebuild with the same model embeds nothing that
        was embedded before.

        Returns:
            `[IndexRebuilt(reason), IndexSynced(trigger="rebuild")]`.
        """
        with self._write_lock:
            self._ensure_open()
            return self._rebuild_locked(reason, "rebuild", None, time.perf_counter())

    def _sync_incremental(
        self,
        generation: _Generation,
        trigger: str,
        progress: ProgressCallback | None,
        started: float,
    ) -> IndexSynced:
        plan = plan_sync(self.workspace, generation.records)
        embedded = self._apply(generation, plan, progress, live=True)
        if self._needs_fts:
            store.build_fts(generation.chunks_table)
            self._needs_fts = False
            generation.unindexed = 0
        elif generation.unindexed > max(OPTIMIZE_MIN_ROWS, len(generation.vectors) // 20):
            self._optimize(generation)
        if plan.content_changed or plan.touched:
            self._record_sync(generation.number)
        return IndexSynced(
            files_changed=len(plan.changed),
            files_removed=len(plan.removed),
            chunks_total=len(generation.vectors),
            embedded=embedded,
            duration_ms=(time.perf_counter() - started) * 1000,
            trigger=trigger,
        )

    def _rebuild_locked(
        self, reason: str, trigger: str, progress: ProgressCallback | None, started: float
    ) -> list[BaseEvent]:
        old = self._generation
        if self._wipe_on_rebuild:
            self._wipe_store()
            number = 1
        else:
            number = (self._recorded_generation or 0) + 1
        if self._cache_table is None:
            self._cache_table = self._store.cache_table(self._embedder.name)
        chunks_table, files_table = self._store.create_generation(number)
        fresh = _Generation(
            number, chunks_table, files_table, store.VectorMatrix(self._embedder.dim)
        )
        plan = plan_sync(self.workspace, {})
        embedded = self._apply(fresh, plan, progress, live=False, previous=old)
        store.build_fts(chunks_table)
        fresh.unindexed = 0
        self._needs_fts = False
        self._record_sync(number)  # the atomic swap on disk
        with self._lock:
            self._generation = fresh
            self._pending_rebuild = None
            self._wipe_on_rebuild = False
        self._store.drop_other_generations(number)
        synced = IndexSynced(
            files_changed=len(plan.changed),
            files_removed=0,
            chunks_total=len(fresh.vectors),
            embedded=embedded,
            duration_ms=(time.perf_counter() - started) * 1000,
            trigger=trigger,
        )
        return [IndexRebuilt(reason=reason), synced]

    def _wipe_store(self) -> None:
        """Delete the index folder, keeping the embedding cache if it can still be read."""
        salvaged = None
        if self.index_dir.is_dir():
            salvaged = self._store.read_cache(self._embedder.name)
        with self._lock:
            self._generation = None
            self._cache_table = None
            self._cached_hashes = None
            self._recorded_generation = None
            self._store.close()
            shutil.rmtree(self.index_dir, ignore_errors=True)
        if salvaged is not None and salvaged.num_rows:
            self._store.restore_cache(self._embedder.name, salvaged)

    def _record_sync(self, generation: int) -> None:
        self._recorded_generation = generation
        self._last_sync = self._clock().isoformat()
        self._store.write_identity(self._identity(generation))

    def _apply(
        self,
        generation: _Generation,
        plan: SyncPlan,
        progress: ProgressCallback | None,
        *,
        live: bool,
        previous: _Generation | None = None,
    ) -> int:
        """Chunk, embed and commit a plan into `generation`; returns the texts embedded."""
        files_total = len(plan.changed) + len(plan.removed)
        new_chunks: list[Chunk] = []
        for done, changed in enumerate(plan.changed, start=1):
            new_chunks.extend(
                chunk_markdown(
                    changed.record.path,
                    changed.text,
                    max_tokens=self.chunk_tokens,
                    overlap_tokens=self.overlap_tokens,
                )
            )
            if progress is not None:
                progress(IndexSyncProgress(done, files_total, len(new_chunks), 0))

        vectors, embedded = self._vectors_for(
            new_chunks, generation, previous, progress, files_total
        )
        matrix = (
            np.stack([vectors[c.hash] for c in new_chunks])
            if new_chunks
            else np.zeros((0, self._embedder.dim), dtype=np.float32)
        )

        stale = [c.record.path for c in plan.changed] + plan.removed
        guard: AbstractContextManager[Any] = self._lock if live else nullcontext()
        with guard:
            for where in store.in_filters("path", stale):
                generation.chunks_table.delete(where)
            if new_chunks:
                generation.chunks_table.add(
                    store.chunk_rows(new_chunks, matrix, self._embedder.dim)
                )
            removed_rows = generation.vectors.remove_paths(stale)
            generation.vectors.add(new_chunks, matrix)
        generation.unindexed += len(new_chunks) + removed_rows

        updated = [c.record for c in plan.changed] + plan.touched
        for where in store.in_filters("path", [r.path for r in updated] + plan.removed):
            generation.files_table.delete(where)
        if updated:
            generation.files_table.add(store.file_rows(updated))
        for path in plan.removed:
            generation.records.pop(path, None)
        generation.records.update({r.path: r for r in updated + plan.rechecked})
        return embedded

    def _vectors_for(
        self,
        chunks: Sequence[Chunk],
        generation: _Generation,
        previous: _Generation | None,
        progress: ProgressCallback | None,
        files_total: int,
    ) -> tuple[dict[str, np.ndarray], int]:
        """A vector for every chunk hash: from RAM, then the cache table, then the embedder."""
        needed = {c.hash for c in chunks}
        found = generation.vectors.vectors_for_hashes(needed)
        if previous is not None and previous is not generation:
            found.update(previous.vectors.vectors_for_hashes(needed - found.keys()))
        if self._cached_hashes is None:
            self._cached_hashes = store.cache_hashes(self._cache_table)
        if in_cache := (needed - found.keys()) & self._cached_hashes:
            found.update(store.cache_lookup(self._cache_table, in_cache, self._embedder.dim))
        texts = {c.hash: c.text for c in chunks if c.hash not in found}
        hashes = list(texts)
        fresh: dict[str, np.ndarray] = {}
        for start in range(0, len(hashes), EMBED_BATCH):
            batch = hashes[start : start + EMBED_BATCH]
            try:
                vectors = self._embedder.embed([texts[h] for h in batch])
            except Exception as exc:
                raise EmbeddingFailed(f"embedding failed: {type(exc).__name__}: {exc}") from exc
            fresh.update(zip(batch, np.asarray(vectors, dtype=np.float32), strict=True))
            if progress is not None:
                progress(IndexSyncProgress(files_total, files_total, len(chunks), len(fresh)))
        if fresh:
            self._cache_table.add(
                store.cache_rows(list(fresh), np.stack(list(fresh.values())), self._embedder.dim)
            )
            self._cached_hashes.update(fresh)
        found.update(fresh)
        return found, len(fresh)

    def _optimize(self, generation: _Generation) -> None:
        generation.chunks_table.optimize()
        generation.files_table.optimize()
        generation.unindexed = 0

    def optimize(self) -> None:
        """Fold recently added rows into the FTS index and compact the tables (for idle time)."""
        with self._write_lock:
            self._ensure_open()
            if self._generation is not None:
                self._optimize(self._generation)

    # --- reading -------------------------------------------------------------------------

    def is_dirty(self) -> bool:
        """True when a sync would change something (cheap: one stat per memory file)."""
        self._ensure_open()
        generation = self._generation
        if self._pending_rebuild is not None or generation is None or self._needs_fts:
            return True
        return is_dirty(self.workspace, dict(generation.records))

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

    def keyword_candidates(self, query: str, k: int) -> list[tuple[str, float]]:
        """The k best BM25 matches for the words of `query` (any word may match).

        Returns:
            (chunk id, raw BM25 score) pairs, best first; [] when nothing matches, the query
            has no words, or the full-text index is unavailable (see `status()["last_error"]`).
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
                self._last_error = f"keyword search failed: {type(exc).__name__}: {exc}"[:300]
                self._needs_fts = True  # the next sync rebuilds the full-text index
                return []
            known = generation.vectors.chunks
            return [(chunk_id, float(score)) for chunk_id, score in hits if chunk_id in known]

    def chunks(self, ids: Sequence[str]) -> dict[str, Chunk]:
        """The chunks with these ids (ids no longer in the index are left out)."""
        self._ensure_open()
        with self._lock:
            if self._generation is None:
                return {}
            known = self._generation.vectors.chunks
            return {chunk_id: known[chunk_id] for chunk_id in ids if chunk_id in known}

    def status(self) -> dict[str, Any]:
        """A snapshot for `/status` and the UI: files, chunks, model, dim, dirty, index_dir,
        last_sync, plus generation, pending_rebuild, fts_unindexed_rows and last_error."""
        dirty = self.is_dirty()
        with self._lock:
            generation = self._generation
            return {
                "files": len(generation.records) if generation else 0,
                "chunks": len(generation.vectors) if generation else 0,
                "model": self._embedder.name,
                "dim": self._embedder.dim,
                "dirty": dirty,
                "index_dir": str(self.index_dir),
                "last_sync": self._last_sync,
                "generation": generation.number if generation else None,
                "pending_rebuild": self._pending_rebuild,
                "fts_unindexed_rows": generation.unindexed if generation else 0,
                "last_error": self._last_error,
            }

    # --- bulk load and shutdown ----------------------------------------------------------

    def add_synthetic(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None:
        """Bulk-load pre-embedded chunks (benchmarks); builds the FTS index once at the end.

        The rows belong to no file the index tracks, so syncs leave them alone (unless a real
        file has the same path); a rebuild drops them.
        """
        vectors = np.asarray(vectors, dtype=np.float32)
        if len(chunks) != len(vectors):
            raise ValueError(f"{len(chunks)} chunks but {len(vectors)} vectors")
        with self._write_lock:
            self._ensure_open()
            generation = self._generation
            if generation is None or self._pending_rebuild is not None:
                if self._wipe_on_rebuild:
                    self._wipe_store()
                number = (self._recorded_generation or 0) + 1
                self._cache_table = self._store.cache_table(self._embedder.name)
                generation = _Generation(
                    number,
                    *self._store.create_generation(number),
                    store.VectorMatrix(self._embedder.dim),
                )
            batch = 20_000
            for start in range(0, len(chunks), batch):
                generation.chunks_table.add(
                    store.chunk_rows(
                        chunks[start : start + batch],
                        vectors[start : start + batch],
                        self._embedder.dim,
                    )
                )
            store.build_fts(generation.chunks_table)
            with self._lock:
                generation.vectors.add(chunks, vectors)
                generation.unindexed = 0
                self._generation = generation
                self._pending_rebuild = None
                self._wipe_on_rebuild = False
                self._needs_fts = False
            self._record_sync(generation.number)

    def close(self) -> None:
        """Forget the open tables and the in-memory matrix; the next call reopens."""
        with self._write_lock, self._lock:
            self._generation = None
            self._cache_table = None
            self._cached_hashes = None
            self._store.close()
            self._opened = False
            self._pending_rebuild = None
            self._wipe_on_rebuild = False

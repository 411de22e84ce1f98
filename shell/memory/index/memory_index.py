"""The memory index: Markdown memory files, chunked and embedded, in LanceDB plus a RAM matrix.

The files are the truth; this index is derived data under `<workspace>/.cairn/index` and rebuilds
itself when it is missing, corrupt, or was built with another model or chunking. Sync is
incremental: only changed files are re-chunked and only text never embedded before (with this
model) reaches the embedder. The vector leg searches an in-memory matrix; the keyword leg uses
LanceDB's BM25 full-text index. A sync may run in one thread while searches run in others: a lock
makes every search see the index either before or after a sync's commit, never half of it. A sync
of many files commits whole files in batches (`shell.memory.index.batching`), so what it holds
beyond the index itself stays one batch's worth; one of fewer units is a single commit.

This module decides when to sync, rebuild or wipe; the reads searches make from the live
generation are `shell.memory.index.reader`, which `MemoryIndex` extends, and the writing itself
(chunk, embed through the cache, commit rows, record identity) is `shell.memory.index.writer`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from shell.events import CappedFile, Event, IndexRebuilt, IndexSynced, SyncTrigger
from shell.memory.index import store
from shell.memory.index.batching import capped_files
from shell.memory.index.chunking import CONTEXT_TOKENS, UNIT_TOKENS, Chunk
from shell.memory.index.embed import Embedder
from shell.memory.index.embedding_cache import EmbeddingFailed
from shell.memory.index.reader import IndexReader
from shell.memory.index.scan import is_dirty
from shell.memory.index.writer import (
    Generation,
    IndexWriter,
    ProgressCallback,
    SyncCancelled,
)

__all__ = [
    "EmbeddingFailed",
    "MemoryIndex",
    "ProgressCallback",
    "SyncCancelled",
]

OPTIMIZE_MIN_ROWS = 500
"""Fold new rows into the FTS index once this many (or 5% of the table) are unindexed."""


class MemoryIndex(IndexReader):
    """Hybrid-search storage over a workspace's MEMORY.md and memory/**/*.md.

    The reads (vector and keyword candidates, chunks, paths, a file's units) are `IndexReader`'s.
    """

    def __init__(
        self,
        workspace: Path,
        embedder: Embedder,
        *,
        index_dir: Path | None = None,
        chunk_tokens: int = UNIT_TOKENS,
        context_tokens: int = CONTEXT_TOKENS,
        clock: Callable[[], datetime] | None = None,
        scope: str = "global",
    ) -> None:
        """Set the index up; nothing is opened or imported until first use.

        Args:
            workspace: The workspace root.
            embedder: Embeds chunk texts; its name and dim are part of the index identity.
            index_dir: Where the LanceDB folder lives (default `<workspace>/.cairn/index`).
            chunk_tokens: Most tokens in one unit (a Markdown block or part of one).
            context_tokens: Tokens of the previous unit kept as keyword context.
            clock: Returns "now" for `last_sync` (UTC wall clock by default).
            scope: The memory this indexes, named in its events (`shell.scopes`).
        """
        super().__init__(embedder)
        self.workspace = Path(workspace)
        self.index_dir = Path(index_dir) if index_dir else self.workspace / ".cairn" / "index"
        self.chunk_tokens = chunk_tokens
        self.context_tokens = context_tokens
        self.scope = scope
        self._writer = IndexWriter(
            self.workspace,
            embedder,
            self.index_dir,
            chunk_tokens=chunk_tokens,
            context_tokens=context_tokens,
            clock=clock or (lambda: datetime.now(UTC)),
        )
        self._write_lock = threading.Lock()  # one sync / rebuild / bulk load at a time
        self._opened = False
        self._pending_rebuild: str | None = None
        self._wipe_on_rebuild = False

    # --- opening -------------------------------------------------------------------------

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
            identity = self._writer.adopt_recorded()
            change = self._writer.identity.change_from(identity)
            if change is not None:
                self._pending_rebuild = change
                if not self._writer.identity.vectors_reusable(identity):
                    return  # the old vectors are useless to this embedder: search nothing
            self._generation = self._load_generation(int(identity["generation"]))
            self._writer.drop_other_generations(self._generation.number)
        except Exception as exc:
            self._generation = None
            self._pending_rebuild = f"corrupt: {type(exc).__name__}: {exc}"[:300]
            self._wipe_on_rebuild = True

    def _load_generation(self, number: int) -> Generation:
        generation = self._writer.load_generation(number)
        try:
            generation.unindexed = store.unindexed_rows(generation.chunks_table)
        except Exception:
            self._needs_fts = True
        return generation

    # --- sync ----------------------------------------------------------------------------

    def sync(
        self, *, trigger: SyncTrigger = "manual", progress: ProgressCallback | None = None
    ) -> list[Event]:
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
            EmbeddingFailed: The embedder raised; the batches committed before it stay (a
                rebuild's are not swapped in) and the next sync does the rest.
            SyncCancelled: `progress` stopped it; as for EmbeddingFailed, and the vectors
                embedded so far are kept in the embedding cache.
        """
        with self._write_lock:
            started = time.perf_counter()
            self._ensure_open()
            if self._pending_rebuild is None and self._generation is not None:
                try:
                    return [self._sync_incremental(self._generation, trigger, progress, started)]
                except (EmbeddingFailed, SyncCancelled):
                    raise
                except Exception as exc:  # the store broke under us: start over from the files
                    self._pending_rebuild = f"corrupt: {type(exc).__name__}: {exc}"[:300]
                    self._wipe_on_rebuild = True
            return self._rebuild_locked(
                self._pending_rebuild or "manual", trigger, progress, started
            )

    def rebuild(
        self, reason: str = "manual", progress: ProgressCallback | None = None
    ) -> list[Event]:
        """Rebuild from the files into a new generation and swap it in.

        Embeddings come from the cache, so a rebuild with the same model embeds nothing that
        was embedded before. `progress` is told as files are chunked and texts embedded.

        Returns:
            `[IndexRebuilt(reason), IndexSynced(trigger="rebuild")]`.
        """
        with self._write_lock:
            self._ensure_open()
            return self._rebuild_locked(reason, "rebuild", progress, time.perf_counter())

    def _sync_incremental(
        self,
        generation: Generation,
        trigger: SyncTrigger,
        progress: ProgressCallback | None,
        started: float,
    ) -> IndexSynced:
        plan, embedded = self._writer.update(generation, progress, self._lock)
        if self._needs_fts:
            store.build_fts(generation.chunks_table)
            self._needs_fts = False
            generation.unindexed = 0
        elif generation.unindexed > max(OPTIMIZE_MIN_ROWS, len(generation.vectors) // 20):
            self._writer.optimize(generation)
        if plan.content_changed or plan.touched:
            self._writer.record_sync(generation.number)
        return IndexSynced(
            files_changed=len(plan.changed),
            files_removed=len(plan.removed),
            chunks_total=len(generation.vectors),
            embedded=embedded,
            duration_ms=(time.perf_counter() - started) * 1000,
            trigger=trigger,
            capped=capped_files(generation.vectors),
        )

    def _rebuild_locked(
        self,
        reason: str,
        trigger: SyncTrigger,
        progress: ProgressCallback | None,
        started: float,
    ) -> list[Event]:
        old = self._generation
        if self._wipe_on_rebuild:
            self._wipe_store()
            number = 1
        else:
            number = (self._writer.recorded_generation or 0) + 1
        fresh, plan, embedded = self._writer.build(number, progress, previous=old)
        self._needs_fts = False
        self._writer.record_sync(number)  # the atomic swap on disk
        with self._lock:
            self._generation = fresh
            self._pending_rebuild = None
            self._wipe_on_rebuild = False
        self._writer.drop_other_generations(number)
        synced = IndexSynced(
            files_changed=len(plan.changed),
            files_removed=0,
            chunks_total=len(fresh.vectors),
            embedded=embedded,
            duration_ms=(time.perf_counter() - started) * 1000,
            trigger=trigger,
            capped=capped_files(fresh.vectors),
        )
        return [IndexRebuilt(reason=reason, scope=self.scope), synced]

    def _wipe_store(self) -> None:
        """Delete the index folder, keeping the embedding cache if it can still be read."""
        salvaged = self._writer.salvage_cache()
        with self._lock:
            self._generation = None
            self._writer.wipe()
        self._writer.restore_cache(salvaged)

    # --- dirtiness and status ------------------------------------------------------------

    def is_dirty(self) -> bool:
        """True when a sync would change something (cheap: one stat per memory file)."""
        self._ensure_open()
        generation = self._generation
        if self._pending_rebuild is not None or generation is None or self._needs_fts:
            return True
        return is_dirty(self.workspace, dict(generation.records))

    def status(self) -> dict[str, Any]:
        """A snapshot for `/status` and the UI: files, chunks, model, dim, dirty, index_dir,
        last_sync, plus generation, pending_rebuild, fts_unindexed_rows, last_error and capped
        (each file indexed only in part, with the last line search sees)."""
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
                "last_sync": self._writer.last_sync,
                "generation": generation.number if generation else None,
                "pending_rebuild": self._pending_rebuild,
                "fts_unindexed_rows": generation.unindexed if generation else 0,
                "last_error": self._last_error,
                "capped": {c.path: c.indexed_to_line for c in self.capped()},
            }

    def capped(self) -> list[CappedFile]:
        """The files too large to index whole, each with the last line search sees."""
        self._ensure_open()
        with self._lock:
            generation = self._generation
            return capped_files(generation.vectors) if generation else []

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
                generation = self._writer.new_generation(
                    (self._writer.recorded_generation or 0) + 1
                )
            self._writer.add_rows(generation, chunks, vectors)
            with self._lock:
                generation.vectors.add(chunks, vectors)
                generation.unindexed = 0
                self._generation = generation
                self._pending_rebuild = None
                self._wipe_on_rebuild = False
                self._needs_fts = False
            self._writer.record_sync(generation.number)

    def close(self) -> None:
        """Forget the open tables and the in-memory matrix; the next call reopens."""
        with self._write_lock, self._lock:
            self._generation = None
            self._writer.close()
            self._opened = False
            self._pending_rebuild = None
            self._wipe_on_rebuild = False

"""How the memory index is written: generations, the identity record and the embedding pipeline.

`MemoryIndex` decides when to sync, rebuild or wipe and keeps the live generation for searches;
`IndexWriter` does the writing. It chunks changed files, finds a vector for every chunk (from RAM,
then the per-model embedding cache, and only then the embedder), commits rows to a generation's
tables and in-memory matrix, and records which generation is live in `identity.json`. The cache
and the embedder behind it are `shell.memory.index.embedding_cache`; what the identity record
holds and when it forces a rebuild is `shell.memory.index.identity`.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from shell.events import IndexSyncProgress
from shell.memory.index import store
from shell.memory.index.batching import BATCH_UNITS, MAX_FILE_UNITS, batches
from shell.memory.index.chunking import Chunk, chunk_markdown
from shell.memory.index.coherence import with_follows
from shell.memory.index.embed import Embedder
from shell.memory.index.embedding_cache import EmbeddingCache
from shell.memory.index.identity import IndexIdentity
from shell.memory.index.scan import FileRecord, SyncPlan, plan_sync
from shell.memory.index.vector_matrix import VectorMatrix

BULK_BATCH = 20_000
"""Rows per table write when bulk-loading pre-embedded chunks."""

ProgressCallback = Callable[[IndexSyncProgress], None]


class SyncCancelled(Exception):
    """The progress callback stopped the sync (the app is quitting). The batches committed before
    it stay, whole files each (none, for a sync of one batch), and the vectors embedded so far
    are kept in the embedding cache: the next sync does only the rest."""


@dataclass
class Generation:
    """One complete generation: its chunks table, in-memory mirror and file records.

    `records` is replaced, never mutated, so a reader in another thread that took a reference
    holds one whole state.
    """

    number: int
    chunks_table: Any
    vectors: VectorMatrix
    records: dict[str, FileRecord] = field(default_factory=dict)
    unindexed: int = 0


class IndexWriter:
    """Writes generations of the index under `index_dir` for one embedder and chunking.

    Args:
        workspace: The workspace root (the memory files are read from here).
        embedder: Embeds chunk texts; its name and dim are part of the index identity.
        index_dir: Where the LanceDB folder lives.
        chunk_tokens: Most tokens in one unit (a Markdown block or part of one).
        context_tokens: Tokens of the previous unit kept as keyword context.
        clock: Returns "now" for `last_sync`.
    """

    def __init__(
        self,
        workspace: Path,
        embedder: Embedder,
        index_dir: Path,
        *,
        chunk_tokens: int,
        context_tokens: int,
        clock: Callable[[], datetime],
    ) -> None:
        self.workspace = workspace
        self.index_dir = index_dir
        self.chunk_tokens = chunk_tokens
        self.context_tokens = context_tokens
        self._embedder = embedder
        self._clock = clock
        self._store = store.LanceStore(index_dir, embedder.dim)
        self._cache = EmbeddingCache(self._store, embedder)
        self.identity = IndexIdentity(embedder.name, embedder.dim, chunk_tokens, context_tokens)
        """What this index is built with (`identity.json` records it with the live generation)."""
        self.recorded_generation: int | None = None
        """The generation `identity.json` names as live (None before one is read or written)."""
        self.last_sync: str | None = None
        """When a sync last changed the index (ISO 8601), as recorded in `identity.json`."""

    # --- identity ------------------------------------------------------------------------

    def adopt_recorded(self) -> dict[str, Any]:
        """Read `identity.json`, take over its generation and last sync, open the cache.

        Raises:
            ValueError: the identity file is missing.
            Exception: anything the store raises for an unreadable index.
        """
        identity = self._store.read_identity()
        if identity is None:
            raise ValueError(f"{store.IDENTITY_FILE} is missing")
        self.recorded_generation = int(identity["generation"])
        self.last_sync = identity.get("last_sync")
        self._cache.open()
        return identity

    def record_sync(self, generation: int) -> None:
        """Stamp the sync time and name `generation` as live (the atomic swap on disk)."""
        self.recorded_generation = generation
        self.last_sync = self._clock().isoformat()
        self._store.write_identity(self.identity.record(generation, self.last_sync))

    # --- generations ---------------------------------------------------------------------

    def new_generation(self, number: int) -> Generation:
        """Create the empty tables of generation `number` (the embedding cache opens too)."""
        self._cache.open()
        return Generation(number, self._store.create_generation(number), self._empty_matrix())

    def load_generation(self, number: int) -> Generation:
        """Open generation `number` and mirror its vectors in RAM (`unindexed` is left at 0)."""
        chunks_table, records = self._store.open_generation(number)
        matrix = self._empty_matrix()
        matrix.reserve(chunks_table.count_rows())
        for chunks, vectors in store.load_chunks(chunks_table, self._embedder.dim):
            matrix.add(chunks, vectors)
        return Generation(number, chunks_table, matrix, records)

    def drop_other_generations(self, number: int) -> None:
        """Delete every generation's tables but those of `number`."""
        self._store.drop_other_generations(number)

    def build(
        self, number: int, progress: ProgressCallback | None, previous: Generation | None
    ) -> tuple[Generation, SyncPlan, int]:
        """Build generation `number` from every memory file, full-text index included.

        Vectors already in `previous` or the cache are reused. The new generation is not
        recorded as live: that is `record_sync`'s job once the caller is ready to swap.

        Returns:
            The generation, the plan it was built from, and how many texts were embedded.
        """
        if not self._cache.is_open:
            self._cache.open()
        fresh = Generation(number, self._store.create_generation(number), self._empty_matrix())
        plan = plan_sync(self.workspace, {})
        embedded = self.apply(fresh, plan, progress, previous=previous)
        store.build_fts(fresh.chunks_table)
        fresh.unindexed = 0
        return fresh, plan, embedded

    def update(
        self,
        generation: Generation,
        progress: ProgressCallback | None,
        guard: AbstractContextManager[Any],
    ) -> tuple[SyncPlan, int]:
        """Bring the live `generation` up to date with the files, committing under `guard`.

        Returns:
            The plan that was applied and how many texts were embedded.
        """
        plan = plan_sync(self.workspace, generation.records)
        return plan, self.apply(generation, plan, progress, guard=guard)

    def apply(
        self,
        generation: Generation,
        plan: SyncPlan,
        progress: ProgressCallback | None,
        *,
        guard: AbstractContextManager[Any] | None = None,
        previous: Generation | None = None,
    ) -> int:
        """Chunk, embed and commit a plan into `generation`; returns the texts embedded.

        Files are committed in batches of about `BATCH_UNITS` units (a file is never split), so
        what a sync holds beyond the index itself is one batch, whatever the workspace's size.
        A plan of one batch is one commit: a search sees all of it or none of it.

        Args:
            generation: Where the rows go.
            plan: What changed.
            progress: Called with IndexSyncProgress as files are chunked and texts embedded.
            guard: Held while rows change in the chunk table and the matrix (the search lock
                for a live generation; none for one not yet swapped in).
            previous: A generation whose vectors may be reused (the one being replaced).

        Raises:
            EmbeddingFailed: the embedder raised; the batches before it stay committed.
        """
        files_total = len(plan.changed) + len(plan.removed)
        per_file = self._chunk(plan, progress, files_total)
        units = sum(len(chunks) for chunks in per_file.values())
        to_embed = self._unembedded(per_file, generation, previous) if progress is not None else 0
        generation.vectors.reserve(len(generation.vectors) + units)
        embedded = 0

        def report(in_batch: int) -> None:
            if progress is not None:  # may raise SyncCancelled
                done = embedded + in_batch
                progress(IndexSyncProgress(files_total, files_total, units, done, to_embed))

        removed = plan.removed
        for batch in batches(per_file, BATCH_UNITS):
            embedded += self._commit(generation, batch, removed, previous, guard, report)
            removed = []
        if removed:
            self._commit(generation, {}, removed, previous, guard, report)
        self._update_records(generation, plan)
        return embedded

    def _commit(
        self,
        generation: Generation,
        per_file: dict[str, list[Chunk]],
        removed: list[str],
        previous: Generation | None,
        guard: AbstractContextManager[Any] | None,
        report: Callable[[int], None],
    ) -> int:
        """Embed one batch of files' units and swap them, and the removed paths' rows, in."""
        chunks = [chunk for units in per_file.values() for chunk in units]
        vectors, embedded = self._vectors_for(chunks, generation, previous, report)
        matrix = (
            np.stack([vectors[c.hash] for c in chunks])
            if chunks
            else np.zeros((0, self._embedder.dim), dtype=np.float32)
        )
        chunks = with_follows(chunks, matrix)

        # A chunk's id names its path, lines and text, so rows that survive the edit unchanged
        # are left alone: the table loses only the stale rows and gains only the new ones.
        stale_ids, added = self._row_changes(generation.vectors, list(per_file), chunks)
        gone_rows = len(stale_ids) + sum(
            len(generation.vectors.ids_by_path.get(path, ())) for path in removed
        )
        with guard if guard is not None else nullcontext():
            for where in store.any_in_filters({"path": removed, "id": stale_ids}):
                generation.chunks_table.delete(where)
            if added:
                generation.chunks_table.add(
                    store.chunk_rows([chunks[i] for i in added], matrix[added], self._embedder.dim)
                )
            generation.vectors.remove_paths([*per_file, *removed])
            generation.vectors.add(chunks, matrix)
        generation.unindexed += len(added) + gone_rows
        return embedded

    def _chunk(
        self, plan: SyncPlan, progress: ProgressCallback | None, files_total: int
    ) -> dict[str, list[Chunk]]:
        """Each changed file's units, by path, at most `MAX_FILE_UNITS` of them a file."""
        per_file: dict[str, list[Chunk]] = {}
        units = 0
        for done, changed in enumerate(plan.changed, start=1):
            chunks = chunk_markdown(
                changed.record.path,
                changed.text,
                max_tokens=self.chunk_tokens,
                context_tokens=self.context_tokens,
                limit=MAX_FILE_UNITS,
            )
            per_file[changed.record.path] = chunks
            units += len(chunks)
            if progress is not None:
                progress(IndexSyncProgress(done, files_total, units, 0))
        return per_file

    def _update_records(self, generation: Generation, plan: SyncPlan) -> None:
        """The file records after the plan: persisted when files changed or went away."""
        updated = [c.record for c in plan.changed] + plan.touched
        records = dict(generation.records)
        for path in plan.removed:
            records.pop(path, None)
        records.update({r.path: r for r in updated})
        if updated or plan.removed:
            self._store.write_records(generation.number, records.values())
        records.update({r.path: r for r in plan.rechecked})  # a check time only: not persisted
        generation.records = records

    @staticmethod
    def _row_changes(
        vectors: VectorMatrix, paths: Sequence[str], new_chunks: Sequence[Chunk]
    ) -> tuple[list[str], list[int]]:
        """What the chunks table must lose and gain to hold `new_chunks` as the units of `paths`.

        Returns:
            The ids of those files' rows that no new chunk keeps as they are, and the
            positions in `new_chunks` of the chunks that are not rows yet. A unit whose
            neighbour was edited (a new keyword context or `follows`) is both: its row is
            rewritten.
        """
        kept = {c.id for c in new_chunks if vectors.chunks.get(c.id) == c}
        stale_ids = [
            chunk_id
            for path in paths
            for chunk_id in vectors.ids_by_path.get(path, ())
            if chunk_id not in kept
        ]
        added = [i for i, chunk in enumerate(new_chunks) if chunk.id not in kept]
        return stale_ids, added

    def add_rows(
        self, generation: Generation, chunks: Sequence[Chunk], vectors: np.ndarray
    ) -> None:
        """Write pre-embedded chunks to `generation`'s table and build its full-text index.

        The in-memory matrix is left to the caller, which updates it under its search lock.
        """
        for start in range(0, len(chunks), BULK_BATCH):
            generation.chunks_table.add(
                store.chunk_rows(
                    chunks[start : start + BULK_BATCH],
                    vectors[start : start + BULK_BATCH],
                    self._embedder.dim,
                )
            )
        store.build_fts(generation.chunks_table)

    @staticmethod
    def optimize(generation: Generation) -> None:
        """Fold unindexed rows into the full-text index and compact the chunks table."""
        generation.chunks_table.optimize()
        generation.unindexed = 0

    # --- the embedding cache -------------------------------------------------------------

    def _vectors_for(
        self,
        chunks: Sequence[Chunk],
        generation: Generation,
        previous: Generation | None,
        report: Callable[[int], None],
    ) -> tuple[dict[str, np.ndarray], int]:
        """A vector for every chunk hash: from RAM, then the cache table, then the embedder."""
        needed = {c.hash for c in chunks}
        found = generation.vectors.vectors_for_hashes(needed)
        if previous is not None and previous is not generation:
            found.update(previous.vectors.vectors_for_hashes(needed - found.keys()))
        embedded = self._cache.complete(chunks, found, report)
        return found, embedded

    def _unembedded(
        self,
        per_file: dict[str, list[Chunk]],
        generation: Generation,
        previous: Generation | None,
    ) -> int:
        """How many distinct texts neither RAM nor the cache holds: what the embedder will do."""
        hashes = {c.hash for units in per_file.values() for c in units}
        hashes = {h for h in hashes if h not in generation.vectors.ids_by_hash}
        if previous is not None:
            hashes = {h for h in hashes if h not in previous.vectors.ids_by_hash}
        return self._cache.missing(hashes)

    # --- wiping and closing --------------------------------------------------------------

    def salvage_cache(self) -> Any | None:
        """The embedding cache's rows if they can still be read (before a wipe), else None."""
        if not self.index_dir.is_dir():
            return None
        return self._cache.salvage()

    def wipe(self) -> None:
        """Close the store and delete the index folder; nothing is recorded afterwards."""
        self._cache.forget()
        self.recorded_generation = None
        self._store.close()
        shutil.rmtree(self.index_dir, ignore_errors=True)

    def restore_cache(self, salvaged: Any | None) -> None:
        """Put salvaged cache rows back after a wipe (nothing happens for None or no rows)."""
        self._cache.restore(salvaged)

    def close(self) -> None:
        """Forget the open tables and the cached hash set; the store reopens on next use."""
        self._cache.forget()
        self._store.close()

    def _empty_matrix(self) -> VectorMatrix:
        return VectorMatrix(self._embedder.dim)

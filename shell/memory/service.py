"""Recall for one agent: the index, its freshness (session start, before a search, file changes)
and the memory_search tool, with sync events delivered to whoever is listening.

Indexing runs in a worker thread; its events cross to the event loop through a queue, so the UI
never waits for embeddings.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING

from shell.config import Settings
from shell.events import Error, Event, IndexSyncProgress, SyncTrigger
from shell.memory.files.plain import outside_edit_notices
from shell.readonly import read_only
from shell.tools.toolbox import Tool

if TYPE_CHECKING:
    from shell.memory.hit_log import HitLog
    from shell.memory.index.memory_index import MemoryIndex
    from shell.memory.index.watch import MemoryWatcher
    from shell.memory.search.pipeline import MemorySearch, SearchResult


OutsideEdits = Callable[[set[str]], Sequence[Event]]
"""Commits the edits made outside Cairn among changed paths (`MemoryFiles.commit_outside_edits`)."""


class RecallService:
    def __init__(
        self,
        settings: Settings,
        *,
        outside_edits: OutsideEdits | None = None,
        on_progress: Callable[[IndexSyncProgress], None] | None = None,
        scope: str = "global",
    ) -> None:
        """`outside_edits`: called with the memory paths the watcher saw change, once they
        settle, before the index catches up; its events are published like the index's.
        `on_progress`: also told of a sync's progress (a headless command prints it).
        `scope`: the memory recalled (`shell.scopes`), named in the index's events."""
        self.settings = settings
        self.scope = scope
        self._outside_edits = outside_edits
        self._on_progress = on_progress
        self._index: MemoryIndex | None = None
        self._searcher: MemorySearch | None = None
        self._hit_log: HitLog | None = None
        self._ready = threading.Event()
        self._sync_lock = threading.Lock()
        # created here, not in start(): a consumer may begin listening before start() runs
        self._queue: asyncio.Queue[Event] = asyncio.Queue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._listening: asyncio.AbstractEventLoop | None = None
        """The loop a consumer of `events` listens on: a sync's progress reaches it even when
        the sync runs in a search's thread before `start` (the first search of a session)."""
        self._tasks: list[asyncio.Task[None]] = []
        self._watcher: MemoryWatcher | None = None
        self._watcher_made = asyncio.Event()
        self._closing = threading.Event()

    @property
    def index(self) -> MemoryIndex:
        if self._index is None:
            from shell.memory.index.embed import load_embedder
            from shell.memory.index.memory_index import MemoryIndex

            state = self.settings.state_dir
            embedder = load_embedder(self.settings.embedder, state / "fastembed")
            self._index = MemoryIndex(
                self.settings.workspace, embedder, index_dir=state / "index", scope=self.scope
            )
        return self._index

    @property
    def searcher(self) -> MemorySearch:
        if self._searcher is None:
            from shell.memory.citations.project import project_root
            from shell.memory.search.pipeline import MemorySearch
            from shell.memory.search.rerank import CrossEncoder

            self._searcher = MemorySearch(
                self.index,
                hit_log=self.hit_log,
                clock=self.settings.clock,
                recency_weight=self.settings.recency_weight,
                half_life_days=self.settings.recency_half_life_days,
                reranker=CrossEncoder() if self.settings.rerank else None,
                project=project_root(self.settings),
            )
        return self._searcher

    @property
    def hit_log(self) -> HitLog | None:
        """Where searches record their hits for dreaming; None while dreaming is off, so
        nothing is written for it (OpenClaw wrote recall artifacts either way, #84436); None too
        for a workspace Cairn cannot write."""
        if not self.settings.dreaming.enabled or read_only(self.settings.workspace):
            return None
        if self._hit_log is None:
            from shell.memory.hit_log import HitLog, dreams_dir

            self._hit_log = HitLog(dreams_dir(self.settings.workspace), self.settings.clock)
        return self._hit_log

    def tool(self) -> Tool:
        from shell.memory.search.tool import search_tool

        return search_tool(_LazySearcher(self), before_search=self.before_search)

    def start(self) -> None:
        """Sync the index in the background, then watch the files for edits (once; later
        calls do nothing)."""
        if self._loop is not None:
            return
        self._loop = asyncio.get_running_loop()
        self._tasks.append(asyncio.create_task(self._initial_sync()))
        if self.settings.watch:
            self._tasks.append(asyncio.create_task(self._watch()))

    def sync(self, trigger: SyncTrigger) -> list[Event]:
        """Blocking sync (call from a worker thread); progress goes to the queue."""
        from shell.memory.index.writer import SyncCancelled

        with self._sync_lock:
            try:
                return self.index.sync(trigger=trigger, progress=self._publish)
            except SyncCancelled:  # quitting: the next session picks up where this one stopped
                return []
            except Exception as error:  # a broken index must not break the session
                return [Error(kind="index", message=f"memory index sync failed: {error}")]

    def before_search(self) -> list[Event]:
        """Runs in the search tool's thread: wait for the first sync (or run it, when nothing
        started one), then catch up on edits."""
        if self._loop is None and not self._ready.is_set():
            events = self.sync("search")
            self._ready.set()
            return events
        self._ready.wait()
        if self.index.is_dirty():
            return self.sync("search")
        return []

    def drain(self) -> list[Event]:
        events: list[Event] = []
        while not self._queue.empty():
            events.append(self._queue.get_nowait())
        return events

    async def events(self) -> AsyncIterator[Event]:
        self._listening = asyncio.get_running_loop()
        while True:
            yield await self._queue.get()

    async def aclose(self) -> None:
        self._closing.set()  # a sync in progress stops at its next batch
        if self._watcher is not None:
            self._watcher.stop()
        for task in self._tasks:
            if task.get_name().startswith("watch"):
                task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()
        if self._index is not None:
            await asyncio.to_thread(self._index.close)

    # --- internals ----------------------------------------------------------------------

    async def _initial_sync(self) -> None:
        try:
            for event in await asyncio.to_thread(self.sync, "session_start"):
                self._put(event)
        finally:
            self._ready.set()

    async def _watch(self) -> None:
        from shell.memory.index.watch import MemoryWatcher

        asyncio.current_task().set_name("watch")  # type: ignore[union-attr]
        self._watcher = watcher = MemoryWatcher(self.settings.workspace)
        self._watcher_made.set()
        await asyncio.to_thread(self._ready.wait)

        async def changed(paths: set[str]) -> None:
            if self._outside_edits is not None:
                for event in await asyncio.to_thread(self._committed_outside_edits, paths):
                    self._put(event)
            for event in await asyncio.to_thread(self.sync, "watch"):
                self._put(event)

        await watcher.run(changed)

    async def watching(self) -> None:
        """Until edits to the memory files are watched (after `start` and the first sync)."""
        await self._watcher_made.wait()
        assert self._watcher is not None
        await self._watcher.started()

    def _committed_outside_edits(self, paths: set[str]) -> Sequence[Event]:
        assert self._outside_edits is not None
        try:
            events = self._outside_edits(paths)
            return [*events, *outside_edit_notices(self.settings.workspace, events)]
        except Exception as error:  # a failed commit must not stop the watching
            return [Error(kind="background", message=f"committing an outside edit failed: {error}")]

    def _publish(self, event: IndexSyncProgress) -> None:
        if self._closing.is_set():
            from shell.memory.index.writer import SyncCancelled

            raise SyncCancelled
        if self._on_progress is not None:
            self._on_progress(event)
        if loop := self._loop or self._listening:
            loop.call_soon_threadsafe(self._queue.put_nowait, event)

    def _put(self, event: Event) -> None:
        self._queue.put_nowait(event)


class _LazySearcher:
    """Defers building the searcher (and importing lancedb/fastembed) to the first search."""

    def __init__(self, service: RecallService) -> None:
        self._service = service

    @property
    def index(self) -> MemoryIndex:
        return self._service.index

    def search(self, query: str, *, max_results: int, min_score: float) -> SearchResult:
        return self._service.searcher.search(query, max_results=max_results, min_score=min_score)

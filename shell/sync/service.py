"""When a session syncs: a pull at start, a push after writes, `/sync`, retries while offline.

The turn never waits on the network: every sync runs on a worker thread from a background task,
and what it reports goes to a queue the TUI listens to (`events`) or a headless run drains.
Each new commit, whoever made it (`GitStore.on_commit`), schedules a sync `push_delay` seconds
later and moves one already scheduled, so a burst of writes is one push. A remote that cannot
be reached is retried with `Backoff` (5 s, 10 s, … 5 min); a sync that brought files in
re-indexes them (`reindex`). `aclose` makes the push the session's writes owe before the
process exits.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

from shell.events import (
    Event,
    SyncFailed,
    SyncFinished,
    SyncRedacted,
    SyncStatusChanged,
    Take,
)
from shell.memory.paths import is_memory_file
from shell.sync.engine import SyncEngine
from shell.sync.state import Backoff

CLOSE_WAIT_S = 20.0


class SyncService:
    """The sync of one session's workspace.

    Args:
        workspace: The workspace (a git repository).
        remote: A remote from the config: added when the workspace has none.
        author_name, author_email: Of the merge and resolve commits.
        push_delay: Seconds after a write before its push.
        reindex: Called on a worker thread with the memory files a pull changed; its events
            (the index sync) follow the sync's.
    """

    def __init__(
        self,
        workspace: Path,
        *,
        remote: str | None,
        author_name: str,
        author_email: str,
        push_delay: float = 10.0,
        reindex: Callable[[list[str]], Sequence[Event]] = lambda changed: (),
    ) -> None:
        self.engine = SyncEngine(workspace, author_name=author_name, author_email=author_email)
        self._remote = remote
        self._push_delay = push_delay
        self._reindex = reindex
        self._queue: asyncio.Queue[Event] = asyncio.Queue()
        self._backoff = Backoff()
        self._sleeper: asyncio.Task[None] | None = None
        self._runs: set[asyncio.Task[None]] = set()
        self._running = asyncio.Lock()
        self._owed = False
        """Writes since the last complete sync (headless: pushed at close)."""
        self._configured: bool | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def configured(self) -> bool:
        """Whether the workspace has a remote (or the config names one)."""
        if self._configured is None:
            self._configured = bool(self._remote) or self.engine.status().remote is not None
        return self._configured

    def recover(self) -> list[Event]:
        """Blocking, at start: clean up what a killed pull or merge left behind."""
        return [*self.engine.recover()]

    def start(self) -> None:
        """The pull at session start, in the background (nothing without a remote)."""
        self._loop = asyncio.get_running_loop()
        if self.configured():
            self._schedule(0.0)
            self._runs.add(task := self._loop.create_task(self._report_status()))
            task.add_done_callback(self._runs.discard)

    def committed(self, sha: str) -> None:
        """A new commit in the workspace (any thread): it owes a push, `push_delay` from now."""
        self._owed = True
        if self._loop is not None and self.configured():
            self._loop.call_soon_threadsafe(self._schedule, self._push_delay)

    async def sync_now(self) -> list[Event]:
        """`/sync`: one sync now, its events (also when there is no remote: it says so)."""
        if not self.configured():
            return [
                SyncFailed(
                    "error",
                    "No remote: add one with `cairn remote add URL` or remote = … in the config.",
                )
            ]
        return await self._run()

    async def resolve(self, file: str, take: Take) -> list[Event]:
        async with self._running:
            events: list[Event] = [*await asyncio.to_thread(self.engine.resolve, file, take)]
        events.append(await asyncio.to_thread(self.status))
        self._owed = True
        self._schedule(0.0)  # the resolution is a commit the remote should get
        return events

    @contextlib.asynccontextmanager
    async def held(self) -> AsyncIterator[SyncEngine | None]:
        """This session's syncs held off while the caller changes the history itself (a
        forget); the engine, when there is a remote to sync with."""
        async with self._running:
            yield self.engine if self.configured() else None

    async def redact_unpushed(self, *, apply: bool, hint: str) -> list[Event]:
        """The preview of rewriting the commits not pushed yet without their secrets, and with
        `apply` the rewrite, its re-indexing and the sync that pushes it."""
        if not self.configured():
            return await self.sync_now()  # says there is no remote
        async with self._running:
            events: list[Event] = [
                *await asyncio.to_thread(self.engine.redact_unpushed, apply=apply, hint=hint)
            ]
            for event in list(events):
                if isinstance(event, SyncRedacted) and event.files:
                    changed = [name for name in event.files if is_memory_file(name)]
                    events += await asyncio.to_thread(self._reindex, changed)
        if any(isinstance(e, SyncRedacted) for e in events) and not any(
            isinstance(e, SyncFailed) for e in events
        ):
            return [*events, *await self._run()]
        return [*events, await asyncio.to_thread(self.status)]

    def status(self, retry_in_s: float | None = None) -> SyncStatusChanged:
        status = self.engine.status()
        return SyncStatusChanged(
            remote=status.remote,
            last_sync=status.last_sync.isoformat() if status.last_sync else None,
            ahead=status.ahead,
            behind=status.behind,
            offline=status.offline,
            conflicts=list(status.conflicts),
            retry_in_s=retry_in_s,
        )

    async def events(self) -> AsyncIterator[Event]:
        while True:
            yield await self._queue.get()

    def drain(self) -> list[Event]:
        events: list[Event] = []
        while not self._queue.empty():
            events.append(self._queue.get_nowait())
        return events

    async def aclose(self) -> None:
        """Stop the timers, then make the push the session's writes owe (bounded: a remote
        that does not answer in `CLOSE_WAIT_S` is left for the next start)."""
        if self._sleeper is not None:
            self._sleeper.cancel()
        if self._runs:
            await asyncio.wait(self._runs, timeout=CLOSE_WAIT_S)
        if self._owed and self.configured():
            with contextlib.suppress(TimeoutError):
                for event in await asyncio.wait_for(self._run(retry=False), CLOSE_WAIT_S):
                    self._queue.put_nowait(event)

    # --- internals ----------------------------------------------------------------------

    def _schedule(self, delay: float) -> None:
        """A sync in `delay` seconds, replacing one that has not begun; a sync under way is
        never cut (its report and re-indexing would be lost): the next one waits for it."""
        if self._sleeper is not None and not self._sleeper.done():
            self._sleeper.cancel()
        self._sleeper = asyncio.get_running_loop().create_task(asyncio.sleep(delay))
        self._sleeper.add_done_callback(self._wake)

    def _wake(self, sleeper: asyncio.Task[None]) -> None:
        if sleeper.cancelled():
            return
        task = asyncio.get_running_loop().create_task(self._run_and_report())
        self._runs.add(task)
        task.add_done_callback(self._runs.discard)

    async def _report_status(self) -> None:
        """Where the sync stood when the session began, before the first network round trip."""
        self._queue.put_nowait(await asyncio.to_thread(self.status))

    async def _run_and_report(self) -> None:
        async with self._running:  # reported before the next sync begins: in the order they ran
            for event in await self._settled_sync():
                self._queue.put_nowait(event)

    async def _run(self, *, retry: bool = True) -> list[Event]:
        async with self._running:
            return await self._settled_sync(retry=retry)

    async def _settled_sync(self, *, retry: bool = True) -> list[Event]:
        """One sync, its re-indexing and the status after it; the caller holds `_running`, so
        a sync that waits for this one sees its backoff and reports after it."""
        events: list[Event] = [*await asyncio.to_thread(self._sync_once)]
        retry_in: float | None = None
        for event in list(events):
            if isinstance(event, SyncFinished):
                self._owed = False
                self._backoff.reset()
                if event.changed:  # the index's events follow the sync's: the TUI shows them
                    events += await asyncio.to_thread(self._reindex, list(event.changed))
            elif isinstance(event, SyncFailed) and event.kind == "offline" and retry:
                retry_in = self._backoff.next_delay()
        if retry_in is not None:
            self._schedule(retry_in)
        return [*events, await asyncio.to_thread(self.status, retry_in)]

    def _sync_once(self) -> list[Event]:
        """Blocking: add the configured remote first if the workspace has none yet."""
        if self._remote and self.engine.status().remote is None:
            return [*self.engine.add_remote(self._remote)]
        return [*self.engine.sync()]

"""Watch the memory files for edits made outside Cairn (an editor, git pull) and report them.

The workspace is watched recursively with `watchfiles`; only memory files count, and the folders
of the memory tree (`shell.memory.paths`: hidden parts such as `memory/.dreams`, `.cairn/` and
`.git/` never do). A burst
of changes is reported once, after `debounce_s` seconds without a new change.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path, PurePosixPath
from typing import Any

from shell.memory.paths import in_memory_tree, is_memory_file

OnChange = Callable[[set[str]], Awaitable[None] | None]

_DONE = object()
WATCH_TICK_MS = 250
"""How long watchfiles waits for a change before it says so (with an empty set)."""


def memory_path(workspace: Path, path: str) -> str | None:
    """The workspace-relative POSIX path if `path` is a memory file or folder, else None."""
    absolute = Path(path)
    for root in (workspace, workspace.resolve()):
        with contextlib.suppress(ValueError):
            relative = PurePosixPath(absolute.relative_to(root).as_posix())
            break
    else:
        return None
    name = relative.as_posix()
    # A name without a dot in the tree is most likely a folder (renamed or deleted with its
    # notes): it cannot be stat'ed any more to tell.
    if is_memory_file(name) or (in_memory_tree(name) and "." not in relative.name):
        return name
    return None


class MemoryWatcher:
    """Calls back with the changed memory paths after each debounced burst of edits."""

    def __init__(self, workspace: Path, *, debounce_s: float = 1.5) -> None:
        """Args:
        workspace: The workspace root (must exist when `run` starts).
        debounce_s: Quiet time after the last change before the callback fires.
        """
        self.workspace = Path(workspace)
        self.debounce_s = debounce_s
        self._stop = threading.Event()  # watchfiles polls it from its worker thread
        self._watching = asyncio.Event()

    async def started(self) -> None:
        """Until the file system is watched: an edit made after this is reported."""
        await self._watching.wait()

    def _accepts(self, _change: Any, path: str) -> bool:
        return memory_path(self.workspace, path) is not None

    async def run(self, on_change: OnChange) -> None:
        """Watch until `stop()` (or cancellation), calling `on_change(paths)` per burst.

        Changes that arrive while the callback runs are kept and reported in the next call.
        """
        from watchfiles import awatch

        self._stop.clear()
        queue: asyncio.Queue[Any] = asyncio.Queue()

        async def pump() -> None:
            try:
                async for changes in awatch(
                    self.workspace,
                    watch_filter=self._accepts,
                    stop_event=self._stop,
                    step=100,
                    recursive=True,
                    rust_timeout=WATCH_TICK_MS,
                    yield_on_timeout=True,  # the first tick says the watches are in place
                ):
                    self._watching.set()
                    if changes:
                        queue.put_nowait({path for _, path in changes})
            finally:
                queue.put_nowait(_DONE)

        pump_task = asyncio.create_task(pump(), name="memory-watch-pump")
        try:
            while (first := await queue.get()) is not _DONE:
                paths: set[str] = set(first)
                finished = False
                while True:
                    try:
                        more = await asyncio.wait_for(queue.get(), timeout=self.debounce_s)
                    except TimeoutError:
                        break
                    if more is _DONE:
                        finished = True
                        break
                    paths |= more
                relative = {memory_path(self.workspace, p) for p in paths} - {None}
                if relative and not self._stop.is_set():
                    result = on_change({p for p in relative if p is not None})
                    if inspect.isawaitable(result):
                        await result
                if finished:
                    break
        finally:
            self._stop.set()
            with contextlib.suppress(asyncio.CancelledError):
                await pump_task  # re-raises a watcher failure (e.g. the workspace vanished)

    def stop(self) -> None:
        """Ask `run` to return (within ~0.1 s); safe from any thread."""
        self._stop.set()

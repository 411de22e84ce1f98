"""A stdio server's process, which the SDK's `stdio_client` keeps to itself.

Its exit code is what a failure notice needs ("exited with code 1: …"), so the SDK's spawn
function is wrapped once: the process it returns is handed to whoever is watching in the
current task (a supervisor sets `watch` before it opens the transport). When a later SDK has
no such function, nothing is wrapped and notices say "closed the connection" instead.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, Protocol


class Process(Protocol):
    """What a notice reads of a server's process."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...


_SPAWN = "_create_platform_compatible_process"
_watcher: ContextVar[Callable[[Process], None] | None] = ContextVar("mcp_spawn", default=None)


def watch(seen: Callable[[Process], None]) -> None:
    """Hand the next process spawned in this task (and the tasks it starts) to `seen`."""
    _install()
    _watcher.set(seen)


def _install() -> None:
    from mcp.client import stdio

    original = getattr(stdio, _SPAWN, None)
    if original is None or getattr(original, "_cairn_watched", False):
        return

    async def spawn(*args: Any, **kwargs: Any) -> Any:
        process = await original(*args, **kwargs)
        if (seen := _watcher.get()) is not None:
            seen(process)
        return process

    setattr(spawn, "_cairn_watched", True)  # noqa: B010 (an attribute on a function)
    setattr(stdio, _SPAWN, spawn)

"""`cairn mcp` on stdio: the client starts it and speaks on its stdin and stdout.

The SDK reads stdin in a worker thread, which a cancel cannot interrupt: a SIGTERM would wait
for the client's next line. Here stdin is read by the event loop instead (`Lines`), so SIGTERM
stops the server at once, after the push its writes owe. A line longer than `MAX_LINE` (no
request of these tools needs one: a write carries at most 64 kB) is dropped whole, and the
SDK is handed a line that is not JSON, which it reports as a parse error.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from shell.mcp_server.server import MemoryServer

MAX_LINE = 8 * 1024 * 1024
NOT_JSON = "cairn: a line over 8 MiB was dropped\n"


class Lines:
    """stdin's lines as text, read on the event loop."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> Lines:
        return self

    async def __anext__(self) -> str:
        try:
            line = await self._reader.readline()
        except ValueError:  # over the limit: readline dropped what it had read of it
            await self._drop_rest()
            return NOT_JSON
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")

    async def _drop_rest(self) -> None:
        while True:
            try:
                await self._reader.readuntil(b"\n")
                return
            except asyncio.LimitOverrunError as overrun:
                await self._reader.readexactly(overrun.consumed)
            except asyncio.IncompleteReadError:
                return


async def stdin_lines() -> Lines | None:
    """stdin read by the loop; None when stdin is no pipe, socket or terminal (a file)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    except (ValueError, OSError):
        return None
    return Lines(reader)


async def serve_stdio(server: MemoryServer, say: Callable[[str], None]) -> None:
    """Serve the client until it hangs up (stdin closed) or SIGTERM."""
    from mcp.server.stdio import stdio_server

    sdk = server.sdk()
    task = asyncio.current_task()
    assert task is not None
    with contextlib.suppress(NotImplementedError):  # no signal handlers on Windows
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
    await server.start()
    try:
        lines = await stdin_lines()
        stdin = cast(Any, lines)  # the SDK reads `async for line in stdin`, as here
        async with stdio_server(stdin=stdin) as (read, write):
            await sdk.run(read, write, sdk.create_initialization_options())
    except asyncio.CancelledError:
        say("stopped (SIGTERM)")
    finally:
        await server.aclose()

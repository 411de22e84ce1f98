"""Running a search program (rg, git grep) and keeping a bounded part of what it prints.

Its output is read in chunks and split into lines as it comes: each line goes through
`accept`, the first `keep` accepted are kept, the rest only counted, so a search over a huge
tree never holds its whole output. The program is killed at its time limit or when the user
cancels, and what it printed until then is still returned.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from shell.tools.toolbox import ToolError

MAX_LINE_BYTES = 4096
"""Longer output lines are cut to this (a minified file's match, a huge path)."""
MAX_STDERR_BYTES = 2000

Ending = Literal["exited", "timeout", "cancelled"]


@dataclass(frozen=True)
class Streamed:
    kept: list[str]
    """The first accepted lines, as `accept` made them."""
    total: int
    """Every accepted line, kept or not."""
    exit_code: int | None
    stderr: str
    ended: Ending


async def stream_lines(
    argv: Sequence[str],
    *,
    cwd: Path | str,
    keep: int,
    accept: Callable[[str], str | None],
    time_limit: float,
    cancelled: asyncio.Event,
    pass_fds: Sequence[int] = (),
) -> Streamed:
    """Run `argv` in `cwd` and fold its stdout lines through `accept` (None drops a line);
    `pass_fds` stay open in the program (`shell.tools.project.searched`).

    Raises:
        ToolError: the program cannot be started.
    """
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            pass_fds=pass_fds,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError as error:
        raise ToolError(f"{argv[0]} could not be started: {error.strerror or error}") from None
    assert process.stdout is not None and process.stderr is not None
    kept: list[str] = []
    total = 0

    async def fold() -> None:
        nonlocal total
        assert process.stdout is not None
        async for raw in _lines(process.stdout):
            line = accept(raw.decode("utf-8", errors="replace"))
            if line is None:
                continue
            total += 1
            if len(kept) < keep:
                kept.append(line)

    errors = asyncio.ensure_future(_head(process.stderr, MAX_STDERR_BYTES))
    reading = asyncio.ensure_future(fold())
    stop = asyncio.ensure_future(cancelled.wait())
    ended: Ending | None = None  # stays None when this call itself is cancelled
    try:
        done, _ = await asyncio.wait(
            {reading, stop}, timeout=time_limit, return_when=asyncio.FIRST_COMPLETED
        )
        if reading in done:
            reading.result()
            ended = "exited"
        else:
            ended = "cancelled" if stop in done else "timeout"
    finally:
        stop.cancel()
        if ended != "exited" and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
        reading.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reading
        await process.wait()
        stderr = await errors
    assert ended is not None
    code = process.returncode if ended == "exited" else None
    return Streamed(kept, total, code, stderr, ended)


async def _lines(stream: asyncio.StreamReader) -> AsyncIterator[bytes]:
    """The lines of `stream` without their newline, each cut to `MAX_LINE_BYTES`."""
    line = bytearray()
    while chunk := await stream.read(1 << 16):
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            line += chunk[start : start + max(0, min(end - start, MAX_LINE_BYTES - len(line)))]
            yield bytes(line)
            line.clear()
            start = end + 1
        line += chunk[start : start + max(0, MAX_LINE_BYTES - len(line))]
    if line:
        yield bytes(line)


async def _head(stream: asyncio.StreamReader, limit: int) -> str:
    """The first `limit` bytes of `stream`, read to its end (so the program never blocks)."""
    head = bytearray()
    while chunk := await stream.read(1 << 16):
        head += chunk[: max(0, limit - len(head))]
    return head.decode("utf-8", errors="replace").strip()

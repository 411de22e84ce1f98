"""The `run_command` tool: a shell command in the project folder, bounded in time and in memory.

The command runs as `/bin/sh -c` in its own process group, with no terminal and no stdin, in
the sandbox where it works (`shell.tools.project.sandbox`), with an environment by allow-list
(`shell.tools.project.environment`). Its output (stdout and stderr as they came) is spooled whole
to the call's `OutputStore` file, up to a disk cap; in memory only a head and a tail are kept, so
a command that prints gigabytes costs Cairn kilobytes. The card sees the output as
`CommandOutput` events, coalesced and sampled (`_Capture`).

A timeout or a cancel (esc) ends the whole process group: SIGTERM, a grace, then SIGKILL. So does
a shell that exited while a child it left still holds the output pipe. In the sandbox, every
process the command started dies with its shell, even one that left the group. A non-zero exit
code is a result, not an error: the model reads `exitCode`.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, BinaryIO

from shell.config import ToolSettings
from shell.events import Event
from shell.events.tools import CommandEnding, CommandFinished, CommandOutput
from shell.text import byte_size
from shell.tools.project.environment import command_environment
from shell.tools.project.outputs import OutputStore
from shell.tools.project.root import ProjectRoot
from shell.tools.project.sandbox import Sandbox, limit_resources
from shell.tools.toolbox import CallContext, CallPreview, Tool, ToolResult, json_result

MAX_COMMAND_CHARS = 10_000
READ_CHUNK = 64 * 1024
HEAD_BYTES = 8 * 1024
"""The start of the output the result keeps."""
TAIL_BYTES = 24 * 1024
"""The end of the output the result keeps (the end says most: the error, the summary)."""
DISK_CAP = 64 * 1024 * 1024
"""Bytes spooled to the output file; past it they are counted and dropped."""
EMIT_INTERVAL = 0.1
"""Seconds between two `CommandOutput` events of one call, at least."""
EMIT_BYTES = 4 * 1024
"""At most this much output in one event; faster output is sampled (its latest tail)."""
EMIT_BUDGET = 256 * 1024
"""After this much output shown, events come once a second: a chatty command that runs for
half an hour must not fill the card and the session's view log."""
KILL_GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL of the process group."""
LINGER = 0.5
"""Seconds the output may go on after the shell exited before its children are ended."""
POLL = 0.1
"""Seconds between two looks at whether the shell exited."""

DESCRIPTION = (
    "Run a shell command (/bin/sh -c) in the project folder and return its exit code and "
    "output (stdout and stderr together). No stdin and no terminal: interactive programs fail "
    "or read EOF. A long output is cut to its start and end; the result's outputRef names the "
    "whole output for read_output. The command and its children are killed at `timeout` seconds "
    "or when the user cancels. Its environment holds only PATH, HOME, the locale and the like."
)


def command_tool(
    root: ProjectRoot,
    outputs: OutputStore,
    settings: ToolSettings,
    environ: Mapping[str, str] | None = None,
    sandbox: Sandbox | None = None,
) -> Tool:
    """The `run_command` tool for `root`; `environ` (default `os.environ`) is what the command's
    environment is made from, read at each call; `sandbox` confines it (None: it runs bare)."""
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "command": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_COMMAND_CHARS,
                "description": "The command line, as /bin/sh reads it (pipes, &&, quotes).",
            },
            "timeout": {
                "type": "number",
                "exclusiveMinimum": 0,
                "maximum": settings.max_timeout,
                "default": settings.command_timeout,
                "description": "Seconds before the command is killed.",
            },
        },
        "required": ["command"],
        "additionalProperties": False,
    }

    def timeout_of(arguments: dict[str, Any]) -> float:
        return float(arguments.get("timeout", settings.command_timeout))

    async def preview(arguments: dict[str, Any]) -> CallPreview:
        command = str(arguments["command"])
        return CallPreview(
            summary=f"run {command}",
            subject=command,
            command=command,
            detail=f"in {root.folder}, timeout {timeout_of(arguments):g} s",
        )

    async def run(arguments: dict[str, Any], context: CallContext) -> ToolResult:
        source = os.environ if environ is None else environ
        env = command_environment(source, settings.pass_env, str(root.folder))
        command, seconds = str(arguments["command"]), timeout_of(arguments)
        return await run_command(command, seconds, root.folder, env, outputs, context, sandbox)

    return Tool(
        name="run_command",
        description=DESCRIPTION + (sandbox.note() if sandbox else ""),
        parameters=parameters,
        run=run,
        risk="execute",
        preview=preview,
        source="project",
    )


async def run_command(
    command: str,
    time_limit: float,
    cwd: Path,
    env: Mapping[str, str],
    outputs: OutputStore,
    context: CallContext,
    sandbox: Sandbox | None = None,
) -> ToolResult:
    """Run `command` to its end, `time_limit` seconds or a cancel: the result, with its
    `CommandFinished`. One that cannot start is an error result (and a `failed` one)."""
    started = time.perf_counter()
    sandbox = sandbox or Sandbox(mode="off")
    wrapped, group = await asyncio.to_thread(sandbox.launch, command, cwd, env.get("HOME"))
    try:
        process = await asyncio.create_subprocess_exec(
            *(wrapped or ["/bin/sh", "-c", command]),
            cwd=cwd,
            preexec_fn=(lambda: limit_resources(group)) if wrapped else None,
            env=dict(env),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
    except (OSError, subprocess.SubprocessError) as error:  # the latter: its cgroup not joined
        await asyncio.to_thread(group.close)
        reason = f"the command could not start: {getattr(error, 'strerror', 0) or error} (in {cwd})"
        finished = CommandFinished(context.call_id, command, None, "failed", 0, 0.0, None, reason)
        return ToolResult(content=f"Error: {reason}", error=reason, events=(finished,))
    with outputs.path(context.call_id).open("wb") as spool:
        capture = _Capture(spool, context.emit, context.call_id)
        try:
            ended = await _supervise(process, capture, time_limit, context.cancelled)
            if wrapped:  # bwrap may exit before its namespace's init has ended every process
                await _group_gone(process.pid)
        except BaseException:  # this task was cancelled itself: leave nothing running
            _signal_group(process.pid, signal.SIGKILL)
            await asyncio.shield(asyncio.gather(_reaped(process), _group_gone(process.pid)))
            raise
        finally:
            hits = await asyncio.shield(asyncio.to_thread(group.close))  # the bounds it ran into
    outputs.prune()
    duration_ms = round((time.perf_counter() - started) * 1000, 1)
    ref = outputs.ref(context.call_id)
    text, cut = capture.result_text(ref)
    payload: dict[str, Any] = {
        "command": command,
        "exitCode": process.returncode,
        "ended": ended,
        "output": text,
        "outputBytes": capture.total,
        **({"bounds": hits} if hits else {}),
    }
    if cut:
        payload["outputRef"] = ref
    detail = "; ".join(part for part in (*hits, capture.spool_note()) if part)
    if ended == "timeout":
        detail = f"killed after {time_limit:g} s" + (f"; {detail}" if detail else "")
    finished = CommandFinished(
        context.call_id, command, process.returncode, ended, capture.total, duration_ms
    )
    return json_result(payload, [replace(finished, output_ref=ref if cut else None, detail=detail)])


async def _supervise(
    process: asyncio.subprocess.Process,
    capture: _Capture,
    time_limit: float,
    cancelled: asyncio.Event,
) -> CommandEnding:
    """Pump the output until the pipe closes and the shell exits, the time limit, or a cancel;
    end the process group when it has to go. The shell is reaped when this returns."""
    assert process.stdout is not None
    loop = asyncio.get_running_loop()
    reader = asyncio.ensure_future(_pump(process.stdout, capture))
    cancel = asyncio.ensure_future(cancelled.wait())
    exited = asyncio.ensure_future(process.wait())  # wakes the loop at the exit, not a poll later
    ticker = asyncio.ensure_future(_tick(capture))
    deadline = loop.time() + time_limit
    ending: CommandEnding = "exited"
    linger_until: float | None = None
    try:
        # Before Python 3.12, `process.wait()` returns only once the pipe closes too, so the
        # shell's exit is seen through `returncode`, polled.
        while not (reader.done() and process.returncode is not None):
            now = loop.time()
            if cancel.done():
                ending = "cancelled"
                break
            if now >= deadline:
                ending = "timeout"
                break
            if process.returncode is not None and linger_until is None:
                linger_until = now + LINGER
            if linger_until is not None and now >= linger_until:
                break  # the shell is gone, a child of it still holds the pipe
            if reader.done() and reader.exception() is not None:
                break  # the spool failed (a full disk): end the command, then say why
            await asyncio.wait(
                {task for task in (reader, cancel, exited) if not task.done()},
                timeout=min(deadline, linger_until or deadline, now + POLL) - now,
                return_when=asyncio.FIRST_COMPLETED,
            )
        if not (reader.done() and process.returncode is not None):
            await _end_group(process, reader)
        await _reaped(process)
        if not reader.done():  # a process that left the group holds the pipe: stop reading
            await asyncio.wait({reader}, timeout=1.0)
        elif (error := reader.exception()) is not None:
            raise error
    finally:
        for task in (reader, cancel, exited, ticker):
            task.cancel()
        capture.flush()
    return ending


async def _reaped(process: asyncio.subprocess.Process) -> None:
    """Wait for the child watcher to reap the shell (it was killed, or it exited)."""
    for _ in range(500):  # 10 s: after a SIGKILL, nothing more can be done
        if process.returncode is not None:
            return
        await asyncio.sleep(0.02)


async def _end_group(process: asyncio.subprocess.Process, reader: asyncio.Future[None]) -> None:
    """SIGTERM the command's process group, wait up to `KILL_GRACE` for it to go, SIGKILL."""
    _signal_group(process.pid, signal.SIGTERM)
    deadline = asyncio.get_running_loop().time() + KILL_GRACE
    while asyncio.get_running_loop().time() < deadline:
        if process.returncode is not None and reader.done() and not _group_alive(process.pid):
            return
        await asyncio.sleep(0.05)
    _signal_group(process.pid, signal.SIGKILL)
    await _group_gone(process.pid)


async def _group_gone(pgid: int) -> None:
    """Wait (10 s at most) for the group's last process to end. In the sandbox it includes the
    namespace's init, which ends only once every process of the namespace has."""
    for _ in range(2000):
        if not _group_alive(pgid):
            return
        await asyncio.sleep(0.005)


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def _group_alive(pgid: int) -> bool:
    """Whether a process that is not a zombie is left in the group (without /proc: any)."""
    if not os.path.isdir("/proc"):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, 0)
            return True
        return False
    for entry in os.scandir("/proc"):
        try:
            stat = Path(entry.path, "stat").read_text() if entry.name.isdigit() else ""
        except OSError:
            continue
        # "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
            return True
    return False


async def _pump(stream: asyncio.StreamReader, capture: _Capture) -> None:
    while chunk := await stream.read(READ_CHUNK):
        capture.feed(chunk)


async def _tick(capture: _Capture) -> None:
    """Send what output waits at every interval: a line printed before a long pause shows."""
    while True:
        await asyncio.sleep(EMIT_INTERVAL)
        capture.flush(due_only=True)


class _Capture:
    """A command's output: spooled to disk (up to `DISK_CAP`), a head and a tail kept in memory,
    and sampled to the card as `CommandOutput` events."""

    def __init__(self, spool: BinaryIO, emit: Callable[[Event], None], call_id: str) -> None:
        self._spool = spool
        self._emit = emit
        self._call_id = call_id
        self.total = 0
        self.spooled = 0
        self._head = bytearray()
        self._tail = bytearray()
        self._pending = bytearray()
        self._dropped = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._resync = False
        self._shown = 0
        self._last_emit = -1e9

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        if self.spooled < DISK_CAP:
            kept = chunk[: DISK_CAP - self.spooled]
            self._spool.write(kept)
            self.spooled += len(kept)
        self._pending += chunk
        head_room = HEAD_BYTES - len(self._head)
        if head_room > 0:
            self._head += chunk[:head_room]
            chunk = chunk[head_room:]
        self._tail += chunk
        if len(self._tail) > 2 * TAIL_BYTES:
            del self._tail[:-TAIL_BYTES]
        if len(self._pending) > EMIT_BYTES:
            self._dropped += len(self._pending) - EMIT_BYTES
            del self._pending[:-EMIT_BYTES]
            self._decoder.reset()
            self._resync = True
        self.flush(due_only=True)

    def flush(self, *, due_only: bool = False) -> None:
        """Emit the waiting output (with a note of what was skipped), unless `due_only` and the
        last event was too recent."""
        now = time.monotonic()
        interval = EMIT_INTERVAL if self._shown < EMIT_BUDGET else 1.0
        if not self._pending or (due_only and now - self._last_emit < interval):
            return
        data = bytes(self._pending)
        if self._resync:
            data = _from_char_start(data)
        text = self._decoder.decode(data)
        if self._dropped:
            text = f"\n… {byte_size(self._dropped)} not shown …\n{text}"
        self._pending.clear()
        self._dropped, self._resync, self._last_emit = 0, False, now
        if text:
            self._shown += len(text)
            self._emit(CommandOutput(self._call_id, text))

    def result_text(self, ref: str) -> tuple[str, bool]:
        """The output as the model sees it: whole, or its head and tail around a note of the
        cut (True)."""
        if self.total <= HEAD_BYTES + TAIL_BYTES:
            return (self._head + self._tail).decode("utf-8", "replace"), False
        tail = bytes(self._tail[-TAIL_BYTES:])
        cut = self.total - len(self._head) - len(tail)
        whole = "the whole output"
        if self.spooled != self.total:
            whole = f"its first {byte_size(DISK_CAP)}"
        head_text = codecs.getincrementaldecoder("utf-8")("replace").decode(bytes(self._head))
        tail_text = _from_char_start(tail).decode("utf-8", "replace")
        note = f'\n… {cut} bytes cut; read_output(ref="{ref}") reads {whole} …\n'
        return head_text + note + tail_text, True

    def spool_note(self) -> str:
        if self.spooled == self.total:
            return ""
        lost = byte_size(self.total - self.spooled)
        return f"output past {byte_size(DISK_CAP)} not kept ({lost})"


def _from_char_start(data: bytes) -> bytes:
    """`data` without the UTF-8 continuation bytes a cut left at its start."""
    start = 0
    while start < min(3, len(data)) and data[start] & 0xC0 == 0x80:
        start += 1
    return data[start:]

"""read_file: a bounded window of a project file, or of a kept output, with a continuation.

Like `memory_get`: at most `lines` lines from line `from`, cut early past `MAX_READ_CHARS`, and
`nextFrom` when more remains. A read of a project file is recorded in the `ReadLedger`, which
is what later allows an edit of it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shell.text import split_lines
from shell.tools.project.ledger import ReadLedger
from shell.tools.project.outputs import PREFIX, OutputStore
from shell.tools.project.root import ProjectRoot
from shell.tools.toolbox import CallContext, Tool, ToolError, ToolResult, json_result

MAX_READ_LINES = 2000
DEFAULT_READ_LINES = 200
MAX_READ_CHARS = 24_000
MAX_FILE_BYTES = 50 * 1024 * 1024
BINARY_SNIFF = 8192

READ_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "minLength": 1,
            "maxLength": 1000,
            "description": "A file, relative to the project folder; or output:<call id> for "
            "the whole output of an earlier call whose result was cut.",
        },
        "from": {
            "type": "integer",
            "minimum": 1,
            "default": 1,
            "description": "1-based line to start reading at.",
        },
        "lines": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_READ_LINES,
            "default": DEFAULT_READ_LINES,
            "description": "How many lines to read.",
        },
    },
    "required": ["path"],
    "additionalProperties": False,
}

READ_DESCRIPTION = (
    "Read lines of a text file in the project folder (path relative to it). Bounded: at most "
    "`lines` lines from line `from`, and less when the text is long; when more remains the "
    "result has nextFrom, to continue. Read a file before editing it with edit_file or "
    "write_file. output:<call id> reads the whole output of an earlier call whose result was cut."
)


@dataclass(frozen=True)
class Window:
    """Lines `from_line`… of a text, as read_file returns them."""

    text: str
    from_line: int
    lines: int
    total_lines: int
    next_from: int | None
    cut_line: bool = False
    """The one line shown was longer than the limit and is cut short."""


def load_text(path: Path, shown: str) -> bytes:
    """The bytes of a text file, whole.

    Raises:
        ToolError: it is missing, a folder, too large, or binary (a NUL in its first 8 KB).
    """
    if path.is_dir():
        raise ToolError(f"{shown} is a folder; list it with list_files")
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise ToolError(f"{shown} is not a regular file (a pipe, a device); it is not read")
        if size > MAX_FILE_BYTES:
            raise ToolError(
                f"{shown} is {size / 1024 / 1024:.0f} MB, over the {MAX_FILE_BYTES // 2**20} MB "
                "read_file reads; search it with grep instead"
            )
        data = path.read_bytes()
    except FileNotFoundError:
        raise ToolError(f"{shown} does not exist; find files with list_files") from None
    except OSError as error:
        raise ToolError(f"{shown} cannot be read: {error.strerror or error}") from None
    if b"\0" in data[:BINARY_SNIFF]:
        raise ToolError(f"{shown} is a binary file; read_file reads only text")
    return data


def window(text: str, from_line: int, count: int, max_chars: int = MAX_READ_CHARS) -> Window:
    """Up to `count` lines from 1-based `from_line`, stopping before `max_chars` is passed (a
    lone line longer than that is cut short)."""
    every = split_lines(text)
    start = from_line - 1
    kept: list[str] = []
    used = 0
    cut_line = False
    for line in every[start : start + count]:
        cost = len(line) + (1 if kept else 0)
        if used + cost > max_chars:
            if not kept:
                kept, cut_line = [line[:max_chars]], True
            break
        kept.append(line)
        used += cost
    end = start + len(kept)
    return Window(
        text="\n".join(kept),
        from_line=from_line,
        lines=len(kept),
        total_lines=len(every),
        next_from=end + 1 if end < len(every) else None,
        cut_line=cut_line,
    )


def window_payload(shown: str, found: Window) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "path": shown,
        "text": found.text,
        "from": found.from_line,
        "lines": found.lines,
        "totalLines": found.total_lines,
    }
    if found.cut_line:
        payload["lineCut"] = True
    if found.next_from is not None:
        payload["nextFrom"] = found.next_from
        payload["note"] = f"[More content available. Use from={found.next_from} to continue.]"
    elif found.from_line > found.total_lines and found.total_lines:
        payload["note"] = f"[from is past the end: the file has {found.total_lines} lines.]"
    return payload


def read_tool(root: ProjectRoot, outputs: OutputStore, ledger: ReadLedger) -> Tool:
    """The read_file tool over `root` and the kept outputs, recording reads in `ledger`."""

    def read(given: str, from_line: int, count: int) -> dict[str, Any]:
        if given.startswith(PREFIX):
            data = load_text(outputs.find(given), given)
            return window_payload(given, window(_decode(data), from_line, count))
        path = root.resolve(given)
        shown = root.relative(path)
        data = load_text(path, shown)
        ledger.record(path, data)
        return window_payload(shown, window(_decode(data), from_line, count))

    async def run(arguments: dict[str, Any], _context: CallContext) -> ToolResult:
        payload = await asyncio.to_thread(
            read,
            arguments["path"],
            int(arguments.get("from", 1)),
            int(arguments.get("lines", DEFAULT_READ_LINES)),
        )
        return json_result(payload)

    return Tool("read_file", READ_DESCRIPTION, READ_SCHEMA, run, source="project")


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")

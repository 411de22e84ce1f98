"""read_file: a bounded window of a project file, or of a kept output, with a continuation.

Like `memory_get`: at most `lines` lines from line `from`, cut early past `MAX_READ_CHARS`, and
`nextFrom` when more remains. A read of a project file is recorded in the `ReadLedger`, which
is what later allows an edit of it.
"""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path
from typing import Any

from shell.tools.project.ledger import ReadLedger
from shell.tools.project.outputs import PREFIX, OutputStore
from shell.tools.project.pinned import MOVED, Moved, opened_file, read_all
from shell.tools.project.root import ProjectRoot
from shell.tools.toolbox import CallContext, Tool, ToolError, ToolResult, json_result
from shell.tools.window import window, window_arguments, window_payload

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
        **window_arguments(DEFAULT_READ_LINES),
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


def load_text(root: ProjectRoot, path: Path, shown: str) -> bytes:
    """The bytes of a text file, whole, opened without following a symlink (`pinned`).

    Raises:
        ToolError: it is missing, a folder, too large, binary (a NUL in its first 8 KB), or a
            symlink was swapped in since the check.
    """
    try:
        with opened_file(root, path) as (fd, found):
            if stat.S_ISDIR(found.st_mode):
                raise ToolError(f"{shown} is a folder; list it with list_files")
            if not stat.S_ISREG(found.st_mode):
                raise ToolError(f"{shown} is not a regular file (a pipe, a device); it is not read")
            if found.st_size > MAX_FILE_BYTES:
                raise ToolError(
                    f"{shown} is {found.st_size / 1024 / 1024:.0f} MB, over the "
                    f"{MAX_FILE_BYTES // 2**20} MB read_file reads; search it with grep instead"
                )
            data = read_all(fd, found.st_size)
    except FileNotFoundError:
        raise ToolError(f"{shown} does not exist; find files with list_files") from None
    except Moved:
        raise ToolError(MOVED.format(shown=shown)) from None
    except OSError as error:
        raise ToolError(f"{shown} cannot be read: {error.strerror or error}") from None
    if b"\0" in data[:BINARY_SNIFF]:
        raise ToolError(f"{shown} is a binary file; read_file reads only text")
    return data


def read_tool(root: ProjectRoot, outputs: OutputStore, ledger: ReadLedger) -> Tool:
    """The read_file tool over `root` and the kept outputs, recording reads in `ledger`."""

    def read(given: str, from_line: int, count: int) -> dict[str, Any]:
        if given.startswith(PREFIX):
            found = outputs.read(given, from_line, count, MAX_READ_CHARS)
            return window_payload(given, found, line_cut=found.cut_line)
        path = root.resolve(given)
        shown = root.relative(path)
        data = load_text(root, path, shown)
        ledger.record(path, data)
        found = window(_decode(data), from_line, count, MAX_READ_CHARS)
        return window_payload(shown, found, line_cut=found.cut_line)

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

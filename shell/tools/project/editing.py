"""edit_file and write_file: changes to project files, never over text the model has not seen.

An existing file must have been read with read_file in this session and be unchanged since
(`ReadLedger`); a new file needs no read. A change is planned twice from the same arguments:
for the preview the user approves (its diff), and again when it runs, so a file that changed
while the user decided is still refused. Bytes the model did not touch stay as they were: the
file is edited as bytes decoded with `surrogateescape`, and `\\r\\n` files keep `\\r\\n`.
"""

from __future__ import annotations

import asyncio
import difflib
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shell.events import FileEdited
from shell.text import split_lines
from shell.tools.project.ledger import ReadLedger
from shell.tools.project.pinned import MOVED, Moved, Written, opened_file, read_all, replace_file
from shell.tools.project.reading import MAX_FILE_BYTES
from shell.tools.project.root import ProjectRoot
from shell.tools.toolbox import CallContext, CallPreview, Tool, ToolError, ToolResult, json_result

MAX_WRITE_BYTES = 1_000_000
MAX_DIFF_LINES = 300
MAX_LINES_NAMED = 20
_LONE_LF = re.compile(r"(?<!\r)\n")

_PATH = {
    "type": "string",
    "minLength": 1,
    "maxLength": 1000,
    "description": "Relative to the project.",
}
EDIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": _PATH,
        "old": {
            "type": "string",
            "minLength": 1,
            "description": "The exact text to replace, whitespace included, as read_file showed "
            "it; enough of it to occur once in the file.",
        },
        "new": {"type": "string", "description": "The text to put in its place."},
        "replace_all": {
            "type": "boolean",
            "default": False,
            "description": "Replace every occurrence of `old`, not just the one.",
        },
    },
    "required": ["path", "old", "new"],
    "additionalProperties": False,
}
WRITE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": _PATH,
        "content": {
            "type": "string",
            "maxLength": MAX_WRITE_BYTES,
            "description": "The complete content of the file.",
        },
    },
    "required": ["path", "content"],
    "additionalProperties": False,
}

EDIT_DESCRIPTION = (
    "Replace exact text in a project file: `old` must occur exactly once (or set replace_all). "
    "Read the file with read_file first; the edit is refused if it changed since. The user "
    "sees the diff and approves it."
)
WRITE_DESCRIPTION = (
    "Create a project file, or replace an existing one with its complete new content (read it "
    "with read_file first; refused if it changed since). Parent folders are created. Prefer "
    "edit_file for a change to part of a file. The user sees the diff and approves it."
)


@dataclass(frozen=True)
class Change:
    """What a call will write, and its diff."""

    path: Path
    shown: str
    before: bytes | None
    after: bytes
    diff: str
    added: int
    removed: int
    executable: bool = False
    """The file is executable now; written, it will not be (`pinned.replace_file`)."""

    @property
    def created(self) -> bool:
        return self.before is None


def edit_tools(root: ProjectRoot, ledger: ReadLedger) -> list[Tool]:
    """edit_file and write_file over `root`, guarded by `ledger`."""
    return [edit_file_tool(root, ledger), write_file_tool(root, ledger)]


def edit_file_tool(root: ProjectRoot, ledger: ReadLedger) -> Tool:
    """edit_file: replace exact text in a file the model has read."""

    def plan(arguments: dict[str, Any]) -> Change:
        path, shown = _target(root, arguments["path"])
        before, executable = _current(root, path, shown)
        if before is None:
            raise ToolError(f"{shown} does not exist; create it with write_file")
        ledger.check(path, before, shown)
        text = before.decode("utf-8", errors="surrogateescape")
        old, new = _matching_newlines(text, arguments["old"], arguments["new"])
        if old == new:
            raise ToolError("old and new are the same: the edit would change nothing")
        _check_occurrences(text, old, shown, replace_all=bool(arguments.get("replace_all")))
        after = (
            text.replace(old, new) if arguments.get("replace_all") else text.replace(old, new, 1)
        )
        return _change(path, shown, before, _encode(after), executable=executable)

    return _change_tool("edit_file", EDIT_DESCRIPTION, EDIT_SCHEMA, plan, root, ledger)


def write_file_tool(root: ProjectRoot, ledger: ReadLedger) -> Tool:
    """write_file: create a file, or replace one the model has read."""

    def plan(arguments: dict[str, Any]) -> Change:
        path, shown = _target(root, arguments["path"])
        before, executable = _current(root, path, shown)
        content: str = arguments["content"]
        if before is not None:
            ledger.check(path, before, shown)
            if b"\r\n" in before:
                content = _LONE_LF.sub("\r\n", content)
        after = _encode(content)
        if len(after) > MAX_WRITE_BYTES:
            raise ToolError(f"the content is {len(after)} bytes, over {MAX_WRITE_BYTES}")
        return _change(path, shown, before, after, executable=executable)

    return _change_tool("write_file", WRITE_DESCRIPTION, WRITE_SCHEMA, plan, root, ledger)


def _change_tool(
    name: str,
    description: str,
    schema: dict[str, Any],
    plan: Callable[[dict[str, Any]], Change],
    root: ProjectRoot,
    ledger: ReadLedger,
) -> Tool:
    """A tool whose preview is `plan`'s diff, and whose run plans again, then writes."""

    async def preview(arguments: dict[str, Any]) -> CallPreview:
        change = await asyncio.to_thread(plan, arguments)
        return _preview(change)

    async def run(arguments: dict[str, Any], context: CallContext) -> ToolResult:
        def plan_and_apply() -> tuple[Change, Written]:
            change = plan(arguments)
            return change, _apply(root, change, ledger)

        change, written = await asyncio.to_thread(plan_and_apply)
        return _result(change, written, context.call_id)

    return Tool(name, description, schema, run, risk="write", preview=preview, source="project")


def _apply(root: ProjectRoot, change: Change, ledger: ReadLedger) -> Written:
    try:
        written = replace_file(root, change.path, change.after)
    except Moved:
        raise ToolError(MOVED.format(shown=change.shown)) from None
    except OSError as error:
        raise ToolError(f"{change.shown} could not be written: {error.strerror or error}") from None
    ledger.record(change.path, change.after)
    return written


def _target(root: ProjectRoot, given: str) -> tuple[Path, str]:
    path = root.resolve(given, for_write=True)
    return path, root.relative(path)


def _current(root: ProjectRoot, path: Path, shown: str) -> tuple[bytes | None, bool]:
    """The file's bytes now (None when it does not exist), and whether it is executable."""
    try:
        with opened_file(root, path) as (fd, found):
            if stat.S_ISDIR(found.st_mode):
                raise ToolError(f"{shown} is a folder, not a file")
            if found.st_size > MAX_FILE_BYTES or not stat.S_ISREG(found.st_mode):
                raise ToolError(
                    f"{shown} is not a regular file under {MAX_FILE_BYTES // 2**20} MB; it is "
                    "not edited here"
                )
            return read_all(fd, found.st_size), bool(found.st_mode & 0o111)
    except FileNotFoundError:
        return None, False
    except Moved:
        raise ToolError(MOVED.format(shown=shown)) from None
    except OSError as error:
        raise ToolError(f"{shown} cannot be read: {error.strerror or error}") from None


def _encode(text: str) -> bytes:
    try:
        return text.encode("utf-8", errors="surrogateescape")
    except UnicodeEncodeError:
        raise ToolError("the text holds characters that are not valid Unicode") from None


def _matching_newlines(text: str, old: str, new: str) -> tuple[str, str]:
    """`old` and `new` with `\\r\\n` line endings when the file has them and `old` has not."""
    if "\r\n" in text and "\n" in old and "\r\n" not in old and old not in text:
        return _LONE_LF.sub("\r\n", old), _LONE_LF.sub("\r\n", new)
    return old, new


def _check_occurrences(text: str, old: str, shown: str, *, replace_all: bool) -> None:
    count = text.count(old)
    if count == 0:
        raise ToolError(
            f"old occurs 0 times in {shown}; copy it exactly from read_file (whitespace and "
            "indentation included), or read the file again"
        )
    if count > 1 and not replace_all:
        lines: list[str] = []
        start = 0
        while (at := text.find(old, start)) != -1 and len(lines) < MAX_LINES_NAMED:
            lines.append(str(text.count("\n", 0, at) + 1))
            start = at + len(old)
        raise ToolError(
            f"old occurs {count} times in {shown} (at lines {', '.join(lines)}); include more "
            "of the surrounding text so it occurs once, or set replace_all"
        )


def _change(
    path: Path, shown: str, before: bytes | None, after: bytes, *, executable: bool
) -> Change:
    old_lines = split_lines(before.decode("utf-8", errors="replace")) if before else []
    new_lines = split_lines(after.decode("utf-8", errors="replace"))
    source = "/dev/null" if before is None else f"a/{shown}"
    lines = list(difflib.unified_diff(old_lines, new_lines, source, f"b/{shown}", lineterm=""))
    added = sum(1 for line in lines[2:] if line.startswith("+"))
    removed = sum(1 for line in lines[2:] if line.startswith("-"))
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"… {len(lines) - MAX_DIFF_LINES} more diff lines"]
    return Change(path, shown, before, after, "\n".join(lines), added, removed, executable)


def _preview(change: Change) -> CallPreview:
    verb = "create" if change.created else "edit"
    counts = f"+{change.added}" if change.created else f"+{change.added} −{change.removed}"
    if change.executable:
        counts += "; it will no longer be executable"
    return CallPreview(
        summary=f"{verb} {change.shown} ({counts})", subject=change.shown, diff=change.diff
    )


def _result(change: Change, written: Written, call_id: str) -> ToolResult:
    event = FileEdited(
        call_id=call_id,
        path=change.shown,
        diff=change.diff,
        added=change.added,
        removed=change.removed,
        created=change.created,
    )
    payload = {
        "path": change.shown,
        "added": change.added,
        "removed": change.removed,
        "created": change.created,
    }
    if written.dropped:
        payload["note"] = (
            f"{change.shown} was executable (mode {written.mode | written.dropped:o}); it is "
            f"written without exec bits (mode {written.mode:o}). A person must chmod it to run "
            "it again: a file the model wrote is never executable."
        )
    return json_result(payload, [event])

"""The memory tools the model calls: memory_get, memory_append, memory_write.

Each is a thin, schema-checked wrapper over `MemoryFiles`; the blocking file and git work runs
in a worker thread. Write tools return their `MemoryWritten` (and `GitLockCleared`) facts in
`ToolResult.events` for the agent loop to emit.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shell.events import Event, WriteReason
from shell.memory.citations.check import check_text, model_marks
from shell.memory.citations.source import ProjectSource
from shell.memory.files.door import MemoryFiles, MemoryPathError
from shell.memory.files.plain import outside_edit_notices
from shell.memory.files.values import WriteOutcome
from shell.memory.paths import daily_note
from shell.tools.toolbox import CallContext, Tool, ToolError, ToolResult, json_result
from shell.tools.window import MAX_WINDOW_LINES, window_arguments, window_payload

MAX_GET_LINES = MAX_WINDOW_LINES
DEFAULT_GET_LINES = 120

_PATH_HINT = "MEMORY.md or memory/<name>.md (workspace-relative)."
_PLACEHOLDER = re.compile(r"YYYY-MM-DD", re.IGNORECASE)
"""The date in the descriptions' `memory/YYYY-MM-DD.md`: a small model copies it as written
(Qwen2.5-Coder-1.5B: `memory/YYYY-MM-DD.md`, `YYYY-MM-DD/notes.md`), meaning today's note."""
_BARE_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})(?:\.md)?")
"""A date alone (`2026-12-03`, Qwen2.5-Coder-1.5B again): that day's note."""

_BLOCK_START = re.compile(r"^(?:\s|#|[-*+]\s|\d{1,9}[.)]\s|>|\|)")
"""A line that opens or continues a Markdown block of its own: an indented continuation, a
heading, a list item, a quote or a table row."""
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


def as_fact_lines(text: str) -> str:
    """`text` as a daily note's lines: each bare line a list item of its own ("- …").

    A note is read as Markdown blocks, and a bare line continues the block above it: the
    "Heron review is on 9 December." a small model appended after "My name is Ada." was one
    unit with it, so "What is my name?" found neither. Headings, items, quotes, table rows,
    indented continuations and fenced code are kept as they are."""
    lines: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        opener = _FENCE.match(line)
        if fence is not None or opener:
            if opener and (fence is None or opener.group(1) == fence):
                fence = None if fence is not None else opener.group(1)
            lines.append(line)
        elif line.strip() and not _BLOCK_START.match(line):
            lines.append(f"- {line.strip()}")
        else:
            lines.append(line)
    return "\n".join(lines)


GET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1, "maxLength": 500, "description": _PATH_HINT},
        **window_arguments(DEFAULT_GET_LINES, MAX_GET_LINES),
    },
    "required": ["path"],
    "additionalProperties": False,
}

APPEND_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "text": {
            "type": "string",
            "minLength": 1,
            "description": "Markdown lines to append, one fact per line (e.g. '- prefers tabs').",
        },
        "path": {
            "type": "string",
            "maxLength": 500,
            "description": "A memory/<name>.md file; left out or empty: today's daily note.",
        },
    },
    "required": ["text"],
    "additionalProperties": False,
}

WRITE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1, "maxLength": 500, "description": _PATH_HINT},
        "content": {"type": "string", "description": "The complete new content of the file."},
    },
    "required": ["path", "content"],
    "additionalProperties": False,
}

GET_DESCRIPTION = (
    "Read exact lines of a memory file: MEMORY.md or memory/*.md (daily notes are "
    "memory/YYYY-MM-DD.md). Bounded: returns at most `lines` lines from line `from`; when more "
    "remains the result has nextFrom. A missing file reads as empty text. Read a file before "
    "rewriting it with memory_write."
)
APPEND_DESCRIPTION = (
    "Append durable facts, decisions or to-dos to today's daily note (leave out path for "
    "it). Append-only: nothing existing is changed, and lines already in "
    "the file are skipped as duplicates. Each write is committed to git."
)
WRITE_DESCRIPTION = (
    "Rewrite a curated memory file (MEMORY.md or memory/*.md) with its complete new content. "
    "An existing file must be read with memory_get first, and the write is refused if it "
    "changed since. Use memory_append for new facts; use this to reorganise or correct. "
    "Each write is committed to git."
)


def memory_tools(
    files: MemoryFiles,
    *,
    today: Callable[[], str],
    origin: Callable[[], str],
    reason: WriteReason = "tool",
) -> list[Tool]:
    """The model's memory tools: memory_get, memory_append and memory_write.

    Args:
        files: The one door to the memory files.
        today: Returns today's date as YYYY-MM-DD (the default daily note).
        origin: Returns where a write came from, e.g. "session 3f2a turn 4", for the commit.
        reason: Why their writes are made, for the commit: "tool" (the model's call in a
            turn), "mcp" (another agent's, through `cairn mcp`).
    """

    def named(path: str) -> str:
        return _named_note(path, daily_note(today()))

    async def get(arguments: dict[str, Any], _context: CallContext) -> ToolResult:
        result = await asyncio.to_thread(
            files.read,
            named(arguments["path"]),
            int(arguments.get("from", 1)),
            int(arguments.get("lines", DEFAULT_GET_LINES)),
        )
        payload = window_payload(result.path, result)
        if files.citations is not None and "#L" in result.text:
            source = ProjectSource(files.citations.root)
            checks = await asyncio.to_thread(check_text, result.text, source)
            if checks:
                payload["sourceChecks"] = model_marks(checks)
        return json_result(payload)

    async def append(arguments: dict[str, Any], _context: CallContext) -> ToolResult:
        path = named(arguments.get("path") or daily_note(today()))
        text = as_fact_lines(arguments["text"])
        outcome = await asyncio.to_thread(files.append, path, text, reason=reason, origin=origin())
        return _append_result(outcome, files.root)

    async def write(arguments: dict[str, Any], _context: CallContext) -> ToolResult:
        outcome = await asyncio.to_thread(
            files.write,
            named(arguments["path"]),
            arguments["content"],
            reason=reason,
            origin=origin(),
        )
        payload: dict[str, Any] = {
            "path": outcome.event.path,
            "bytes": outcome.event.bytes,
            "commit": outcome.event.commit,
        }
        if outcome.event.commit_error:
            payload["commitError"] = outcome.event.commit_error
        if outcome.redaction is not None:
            payload["redacted"] = outcome.redaction.kinds
        if outcome.event.citations_unhashed:
            payload["citationsNotHashed"] = outcome.event.citations_unhashed
        return json_result(payload, _events(outcome, files.root))

    return [
        Tool("memory_get", GET_DESCRIPTION, GET_SCHEMA, get),
        Tool("memory_append", APPEND_DESCRIPTION, APPEND_SCHEMA, append, risk="memory"),
        Tool("memory_write", WRITE_DESCRIPTION, WRITE_SCHEMA, write, risk="memory"),
    ]


def pinned_append_tool(
    files: MemoryFiles,
    target: str,
    *,
    origin: Callable[[], str],
    reason: WriteReason = "flush",
) -> Tool:
    """A memory_append that may only append to `target`, for the flush turn.

    The target is fixed here, so a flush that runs across midnight still writes where it began.

    Raises:
        MemoryPathError: `target` is not a memory file.
    """
    pinned = files.normalize(target)
    refusal = f"Memory flush writes are restricted to {pinned}; use that path only."

    async def append(arguments: dict[str, Any], _context: CallContext) -> ToolResult:
        path = _named_note(arguments.get("path") or pinned, pinned)
        if path != pinned:
            try:
                same = files.normalize(path) == pinned
            except MemoryPathError:
                same = False
            if not same:
                raise ToolError(refusal)
        text = as_fact_lines(arguments["text"])
        outcome = await asyncio.to_thread(
            files.append, pinned, text, reason=reason, origin=origin()
        )
        return _append_result(outcome, files.root)

    description = (
        f"Append durable facts from this conversation to {pinned}, one per line. Append-only; "
        "lines already in the file are skipped. This is the only file you may write now."
    )
    schema = {
        **APPEND_SCHEMA,
        "properties": {
            **APPEND_SCHEMA["properties"],
            "path": {"type": "string", "maxLength": 500, "description": f"Must be {pinned}."},
        },
    }
    return Tool("memory_append", description, schema, append, risk="memory")


def _named_note(path: str, today_note: str) -> str:
    """`path`; `today_note` for a path with the placeholder date in it, a day's note for its
    date alone."""
    if _PLACEHOLDER.search(path):
        return today_note
    bare = _BARE_DATE.fullmatch(path.strip())
    return daily_note(bare.group(1)) if bare else path


def _append_result(outcome: WriteOutcome, root: Path) -> ToolResult:
    event = outcome.event
    payload: dict[str, Any] = {
        "path": event.path,
        "appended": event.lines_added,
        "skippedDuplicates": event.lines_skipped,
        "commit": event.commit,
    }
    if event.commit_error:
        payload["commitError"] = event.commit_error
    if outcome.redaction is not None:
        payload["redacted"] = outcome.redaction.kinds  # what was written holds [REDACTED <kind>]
    if event.citations_unhashed:
        payload["citationsNotHashed"] = event.citations_unhashed
    return json_result(payload, _events(outcome, root))


def _events(outcome: WriteOutcome, root: Path) -> list[Event]:
    found: list[Event | None] = [outcome.outside, *outside_edit_notices(root, [outcome.outside])]
    found += [outcome.lock_cleared, outcome.redaction]
    return [*(event for event in found if event is not None), outcome.event]

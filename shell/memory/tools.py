"""The memory tools the model calls: memory_get, memory_append, memory_write.

Each is a thin, schema-checked wrapper over `MemoryFiles`; the blocking file and git work runs
in a worker thread. Write tools return their `MemoryWritten` (and `GitLockCleared`) facts in
`ToolResult.events` for the agent loop to emit.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from shell.events import Event, WriteReason
from shell.memory.citations.check import check_text, model_marks
from shell.memory.citations.source import ProjectSource
from shell.memory.files.door import MemoryFiles, MemoryPathError
from shell.memory.files.plain import outside_edit_notices
from shell.memory.files.scoped import ScopedDoors
from shell.memory.files.values import MemoryWriteError, WriteOutcome
from shell.memory.paths import daily_note
from shell.scopes.crossing import holds_secret, with_secret_lines_withheld
from shell.scopes.routing import split_user_lines
from shell.scopes.scopes import Scope, ScopeError
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

SCOPE_PROPERTY: dict[str, Any] = {
    "type": "string",
    "enum": ["project", "user"],
    "default": "project",
    "description": "project (default): about this project; user: about the user, read in "
    "every project (never a secret)",
}
"""A write's (and a read's) scope, offered while a project is open (`shell.scopes`)."""

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
    files: MemoryFiles | ScopedDoors,
    *,
    today: Callable[[], str],
    origin: Callable[[], str],
    reason: WriteReason = "tool",
) -> list[Tool]:
    """The model's memory tools: memory_get, memory_append and memory_write.

    Args:
        files: The one door to the memory files, or each scope's door (a project is open:
            the tools take a `scope`, the project's by default).
        today: Returns today's date as YYYY-MM-DD (the default daily note).
        origin: Returns where a write came from, e.g. "session 3f2a turn 4", for the commit.
        reason: Why their writes are made, for the commit: "tool" (the model's call in a
            turn), "mcp" (another agent's, through `cairn mcp`).
    """
    doors = files if isinstance(files, ScopedDoors) else ScopedDoors.single(files)

    def named(path: str) -> str:
        return _named_note(path, daily_note(today()))

    async def get(arguments: dict[str, Any], _context: CallContext) -> ToolResult:
        scope, door = _door(doors, arguments)
        result = await asyncio.to_thread(
            door.read,
            named(arguments["path"]),
            int(arguments.get("from", 1)),
            int(arguments.get("lines", DEFAULT_GET_LINES)),
        )
        if doors.scopes.crosses(scope):
            result = replace(result, text=with_secret_lines_withheld(result.text))
        payload = window_payload(result.path, result)
        if door.citations is not None and "#L" in result.text:
            source = ProjectSource(door.citations.root)
            checks = await asyncio.to_thread(check_text, result.text, source)
            if checks:
                payload["sourceChecks"] = model_marks(checks)
        return json_result({"scope": scope.label, **payload} if doors.scoped else payload)

    async def append(arguments: dict[str, Any], _context: CallContext) -> ToolResult:
        scope, door = _door(doors, arguments)
        path = named(arguments.get("path") or daily_note(today()))
        text = as_fact_lines(arguments["text"])
        outcome = await _guarded(
            doors, scope, text, lambda: door.append(path, text, reason=reason, origin=origin())
        )
        return _append_result(outcome, door.root, scope, doors.scoped)

    async def write(arguments: dict[str, Any], _context: CallContext) -> ToolResult:
        scope, door = _door(doors, arguments)
        outcome = await _guarded(
            doors,
            scope,
            arguments["content"],
            lambda: door.write(
                named(arguments["path"]), arguments["content"], reason=reason, origin=origin()
            ),
        )
        payload: dict[str, Any] = {
            **({"scope": scope.label} if doors.scoped else {}),
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
        return json_result(payload, _events(outcome, door.root, scope))

    schemas = [GET_SCHEMA, APPEND_SCHEMA, WRITE_SCHEMA]
    if doors.scoped:
        schemas = [_with_scope(schema, _named_scope(doors)) for schema in schemas]
        schemas[0] = _with_scope(GET_SCHEMA, _named_scope(doors, READ_SCOPE_HINT))
    return [
        Tool("memory_get", GET_DESCRIPTION, schemas[0], get),
        Tool("memory_append", APPEND_DESCRIPTION, schemas[1], append, risk="memory"),
        Tool("memory_write", WRITE_DESCRIPTION, schemas[2], write, risk="memory"),
    ]


def _with_scope(schema: dict[str, Any], scope: dict[str, Any]) -> dict[str, Any]:
    return {**schema, "properties": {**schema["properties"], "scope": scope}}


READ_SCOPE_HINT = "the memory to read: project (default) or user; a hit's scope works too"


def _named_scope(doors: ScopedDoors, description: str | None = None) -> dict[str, Any]:
    """The scope property, also as a hit names it ("global", "project:heron"): a small model
    writes back the label it read in a search (`ScopedDoors.door` takes either)."""
    labels = [doors.scopes.user.label, doors.scopes.own.label]
    return {
        **SCOPE_PROPERTY,
        "enum": [*SCOPE_PROPERTY["enum"], *labels],
        "description": description or f"{SCOPE_PROPERTY['description']}; a hit's scope works too",
    }


def _door(doors: ScopedDoors, arguments: dict[str, Any]) -> tuple[Scope, MemoryFiles]:
    """The scope a call names and its door; a name that is not "user" or "project" (a path,
    another project's name) is refused before anything is read or written."""
    try:
        return doors.door(arguments.get("scope"))
    except ScopeError as error:
        raise ToolError(str(error)) from None


async def _guarded(
    doors: ScopedDoors, scope: Scope, text: str, write: Callable[[], WriteOutcome]
) -> WriteOutcome:
    """`write` in a worker thread; with a project open, a `text` for the global memory that
    holds a secret is refused first, and the model told where it may go instead (the global
    door blocks it too: this says why)."""
    if doors.scoped and scope.kind == "global" and holds_secret(text):
        raise ToolError(
            "not stored: the user's memory (scope 'user') is read in every project, so it "
            "never keeps a secret; leave it out, or keep it in this project's memory "
            "(scope 'project')"
        )
    return await asyncio.to_thread(write)


def pinned_append_tool(
    files: MemoryFiles | ScopedDoors,
    target: str,
    *,
    origin: Callable[[], str],
    reason: WriteReason = "flush",
) -> Tool:
    """A memory_append that may only append to `target`, for the flush turn.

    The target is fixed here, so a flush that runs across midnight still writes where it began.
    With a project open, the lines about the user go to the same note of the global memory
    and the rest to the project's (`shell.scopes.routing` states the rule).

    Raises:
        MemoryPathError: `target` is not a memory file.
    """
    doors = files if isinstance(files, ScopedDoors) else ScopedDoors.single(files)
    own = doors.own
    pinned = own.normalize(target)
    refusal = f"Memory flush writes are restricted to {pinned}; use that path only."

    async def append(arguments: dict[str, Any], _context: CallContext) -> ToolResult:
        path = _named_note(arguments.get("path") or pinned, pinned)
        if path != pinned:
            try:
                same = own.normalize(path) == pinned
            except MemoryPathError:
                same = False
            if not same:
                raise ToolError(refusal)
        text = as_fact_lines(arguments["text"])
        project_text, user_text = split_user_lines(text) if doors.scoped else (text, "")
        user_scope, user_door = doors.door("user")
        user_result: ToolResult | None = None
        if user_text.strip():
            try:
                user_outcome = await asyncio.to_thread(
                    user_door.append, pinned, user_text, reason=reason, origin=origin()
                )
                user_result = _append_result(user_outcome, user_door.root, user_scope, True)
            except MemoryWriteError:  # the rule keeps secrets out; the door has the last word
                project_text = text
        if not project_text.strip():
            assert user_result is not None
            return user_result
        own_scope = doors.scopes.own
        outcome = await asyncio.to_thread(
            own.append, pinned, project_text, reason=reason, origin=origin()
        )
        result = _append_result(outcome, own.root, own_scope, doors.scoped)
        if user_result is None:
            return result
        payload = {**json.loads(result.content), "user": json.loads(user_result.content)}
        return json_result(payload, [*user_result.events, *result.events])

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


def _append_result(
    outcome: WriteOutcome, root: Path, scope: Scope, scoped: bool = False
) -> ToolResult:
    """The payload of an append; `scoped`: it names the scope written (a project is open)."""
    event = outcome.event
    payload: dict[str, Any] = {
        **({"scope": scope.label} if scoped else {}),
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
    return json_result(payload, _events(outcome, root, scope))


def _events(outcome: WriteOutcome, root: Path, scope: Scope) -> list[Event]:
    found: list[Event | None] = [outcome.outside, *outside_edit_notices(root, [outcome.outside])]
    found += [outcome.lock_cleared, outcome.redaction]
    written = replace(outcome.event, scope=scope.label)  # a door made without its scope too
    return [*(event for event in found if event is not None), written]

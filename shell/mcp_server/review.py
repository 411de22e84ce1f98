"""The dream review and the memory's history, as tools an MCP client may call.

`dream_proposals` lists what dreaming proposes for MEMORY.md, `dream_accept` and `dream_reject`
decide one (through `Dreamer.decide`, as the TUI's review and `cairn dream` do: one commit each,
naming the client), and `memory_history` lists the memory's commits or shows one's diff. Their
descriptions say that a decision is the user's, not the client model's: nothing enters
MEMORY.md that a person did not accept.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from shell.events import Error, Event, ProposalAccepted, ProposalRejected
from shell.git.history import MemoryHistory
from shell.git.runner import GitFailure
from shell.tools.toolbox import CallContext, Tool, ToolError, ToolResult, json_result

if TYPE_CHECKING:
    from shell.dreaming import Dreamer, Preview

MAX_DIFF_CHARS = 20_000
MAX_COMMITS = 100
_ID = {"type": "string", "minLength": 1, "maxLength": 80, "pattern": r"^[A-Za-z0-9_.:-]+$"}
_SHA = {"type": "string", "minLength": 4, "maxLength": 40, "pattern": r"^[0-9a-fA-F]+$"}
"""Hexadecimal only: what reaches git is a commit id, never an option (`--output=…`)."""

PROPOSALS_DESCRIPTION = (
    "List what Cairn's dreaming proposes to add to or change in MEMORY.md (the user's curated "
    "long-term memory), each with its id, its text, why it qualified, its sources and the exact "
    "lines accepting it would change. Show them to the user when they ask to review memory."
)
ACCEPT_DESCRIPTION = (
    "Accept one dreaming proposal into MEMORY.md (one git commit). Only when the user has said "
    "to accept that proposal: the decision is theirs, never yours. `text`: the user's own "
    "wording, when they changed it."
)
REJECT_DESCRIPTION = (
    "Reject one dreaming proposal: it is marked rejected in DREAMS.md and never proposed again. "
    "Only when the user has said to reject it."
)
HISTORY_DESCRIPTION = (
    "The memory's git history: every write is a commit, newest first, with its kind (tool, "
    "flush, dream, mcp, user edit, revert…), its files and the MCP client or Cairn session that "
    "made it. With `sha`, that commit's diff instead. Use it to say when and how something was "
    "remembered."
)


def review_tools(
    dreamer: Dreamer, *, window: int, origin: Callable[[], str], writes: bool
) -> list[Tool]:
    """`dream_proposals`, and with `writes` `dream_accept` and `dream_reject`.

    Args:
        dreamer: Dreaming's review queue and decisions.
        window: The context window whose bootstrap budget an acceptance is checked against.
        origin: The calling client, for the decisions' commits.
        writes: Offer the decisions (not under `--read-only`).
    """

    async def proposals(_arguments: dict[str, Any], _context: CallContext) -> ToolResult:
        previews = await asyncio.to_thread(dreamer.open_proposals, window=window)
        listed = [_preview(preview) for preview in previews]
        note = "Nothing waits for review." if not listed else "Decide only on the user's word."
        return json_result({"proposals": listed, "note": note})

    async def accept(arguments: dict[str, Any], _context: CallContext) -> ToolResult:
        from shell.dreaming import Decision

        text = arguments.get("text") or None
        decision = Decision("accept", arguments["id"], text, origin=origin())
        return _decided(await asyncio.to_thread(dreamer.decide, decision, window=window))

    async def reject(arguments: dict[str, Any], _context: CallContext) -> ToolResult:
        from shell.dreaming import Decision

        decision = Decision("reject", arguments["id"], origin=origin())
        return _decided(await asyncio.to_thread(dreamer.decide, decision, window=window))

    listing = Tool("dream_proposals", PROPOSALS_DESCRIPTION, _schema({}), proposals)
    if not writes:
        return [listing]
    text = {"type": "string", "minLength": 1, "maxLength": 1000}
    return [
        listing,
        Tool(
            "dream_accept",
            ACCEPT_DESCRIPTION,
            _schema({"id": _ID, "text": text}, ["id"]),
            accept,
            risk="memory",
        ),
        Tool("dream_reject", REJECT_DESCRIPTION, _schema({"id": _ID}, ["id"]), reject, "memory"),
    ]


def history_tool(history: MemoryHistory) -> Tool:
    """`memory_history`: the newest commits, or one commit's diff."""

    async def run(arguments: dict[str, Any], _context: CallContext) -> ToolResult:
        if sha := arguments.get("sha"):
            return await asyncio.to_thread(_diff, history, sha)
        limit = int(arguments.get("limit", 20))
        commits = await asyncio.to_thread(history.commits, limit)
        return json_result({"commits": [commit.as_json() for commit in commits]})

    limit = {"type": "integer", "minimum": 1, "maximum": MAX_COMMITS, "default": 20}
    return Tool("memory_history", HISTORY_DESCRIPTION, _schema({"limit": limit, "sha": _SHA}), run)


def _diff(history: MemoryHistory, sha: str) -> ToolResult:
    try:
        diff = history.diff(sha)
    except GitFailure as failure:
        raise ToolError(failure.message) from None
    cut = len(diff) > MAX_DIFF_CHARS
    payload: dict[str, Any] = {"sha": sha, "diff": diff[:MAX_DIFF_CHARS]}
    if cut:
        payload["truncated"] = True
    return json_result(payload)


def _decided(events: list[Event]) -> ToolResult:
    """A decision's result: what it committed, or why it was refused (an error result)."""
    payload: dict[str, Any]
    for event in events:
        match event:
            case Error(message=message):
                raise ToolError(message)
            case ProposalAccepted(proposal=proposal, text=text, commit=commit, open=waiting):
                payload = {"accepted": proposal.id, "text": text, "commit": commit}
                return json_result({**payload, "open": waiting}, events)
            case ProposalRejected(proposal=proposal, commit=commit, open=waiting):
                payload = {"rejected": proposal.id, "commit": commit, "open": waiting}
                return json_result(payload, events)
    raise ToolError("the decision reported nothing")


def _preview(preview: Preview) -> dict[str, Any]:
    proposal = preview.proposal
    listed: dict[str, Any] = {
        "id": proposal.id,
        "kind": proposal.kind,
        "text": proposal.text,
        "why": proposal.reason,
        "sources": [
            {"citation": source.citation, "date": source.date} for source in proposal.sources
        ],
        "changes": preview.diff,
    }
    if preview.stale:
        listed["stale"] = preview.stale
    elif preview.budget.over:
        listed["overBudget"] = (
            f"MEMORY.md would be {preview.budget.chars:,} characters, over its share of the "
            f"prompt ({preview.budget.budget:,}): only the user can accept it, with `cairn dream "
            "--apply ID --over-budget` or in Cairn's review"
        )
    return listed


def _schema(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required or [],
        "additionalProperties": False,
    }

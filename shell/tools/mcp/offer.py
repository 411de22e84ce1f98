"""Which of the ready servers' tools the model is offered, at the session's window.

A server writes its tools' schemas, and every request carries them all: one schema of a
megabyte would put every prompt over the window, and the refusal would blame the user's
message. So a tool is not offered when its input schema refers outside itself (a `$ref` to a
URL, `schemas.non_local_ref`), when its schema alone takes more than `TOOL_SHARE` of the
window, or when it would take all the tools' schemas (the built-in ones too) past `SET_SHARE`
of it, so the system prompt and the conversation keep the other half (the servers in the
config's order, each server's tools in its order). A server with a tool refused is one
warning that names each, with the figures.
"""

from __future__ import annotations

from collections.abc import Sequence

from shell.context.counter import TokenCounter
from shell.context.request import COMPACT_TOOLS_BELOW
from shell.events import Notice
from shell.text import counted, shorten
from shell.tools.mcp.schemas import non_local_ref
from shell.tools.toolbox import Tool

TOOL_SHARE = 1 / 8
"""The share of the window one MCP tool's schema may take (a tool result gets as much)."""
NAMES_SHOWN = 10
"""Tools a notice names for one reason; it counts the others (a server may list thousands)."""
REF_SHOWN = 120
"""Characters of a refused `$ref` a notice shows (the server chose it, and its length)."""
SET_SHARE = 1 / 2
"""The share of the window all the tools' schemas may take together (the MCP tools' taking a
quarter already draws a warning, `shell.tools.workbench`)."""


def offered(
    servers: Sequence[tuple[str, Sequence[Tool]]], window: int, *, taken: int = 0
) -> tuple[list[Tool], list[Notice]]:
    """The tools of `servers` ((name, tools) pairs) the model may be offered at `window`
    tokens, beside tools whose schemas take `taken`; and one notice per server with tools
    refused."""
    counter = TokenCounter()
    compact = window < COMPACT_TOOLS_BELOW
    tool_limit, set_limit = int(window * TOOL_SHARE), int(window * SET_SHARE)
    reasons = {
        "ref": "an input schema that refers outside itself, which Cairn does not fetch",
        "big": f"over the {tool_limit:,} tokens one tool's schema may take (an eighth of the "
        f"{window:,}-token window)",
        "set": f"past the {set_limit:,} tokens all the tools' schemas may take together (half "
        f"of the {window:,}-token window)",
    }
    kept: list[Tool] = []
    notices: list[Notice] = []
    for server, tools in servers:
        refused: dict[str, list[str]] = {reason: [] for reason in reasons}
        for tool in tools:
            tokens = counter.tools([tool.schema(compact=compact)])
            if (ref := non_local_ref(tool.parameters)) is not None:
                refused["ref"].append(f"{tool.name} (refers to {shorten(ref, REF_SHOWN)})")
            elif tokens > tool_limit:
                refused["big"].append(f"{tool.name} ({tokens:,} tokens)")
            elif taken + tokens > set_limit:
                refused["set"].append(f"{tool.name} ({tokens:,} tokens)")
            else:
                taken += tokens
                kept.append(tool)
        if count := sum(map(len, refused.values())):
            why = [f"{_listed(names)}: {reasons[r]}" for r, names in refused.items() if names]
            message = (
                f"MCP server {server}: {counted(count, 'tool')} not offered. {'; '.join(why)}."
            )
            notices.append(Notice(message, "warning"))
    return kept, notices


def _listed(names: list[str]) -> str:
    more = len(names) - NAMES_SHOWN
    return ", ".join(names[:NAMES_SHOWN]) + (f" and {more:,} more" if more > 0 else "")

"""What `cairn mcp` offers a client's model: the tools, what each tells it, and the server's
instructions.

The tools are Cairn's own (`shell.memory.tools`, the search tool, `shell.mcp_server.review`),
schema-checked like any call of Cairn's model; only their descriptions change, for a model that
knows nothing of Cairn: when to search, what is worth saving and what is not. Under
`--read-only` only the tools that read are offered, so a write is refused as a tool that does
not exist.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from shell.mcp_server.review import history_tool, review_tools
from shell.memory.tools import memory_tools
from shell.tools.toolbox import Tool, Toolbox

if TYPE_CHECKING:
    from shell.config import Settings
    from shell.dreaming import Dreamer
    from shell.git.history import MemoryHistory
    from shell.memory.files.door import MemoryFiles
    from shell.memory.service import RecallService

INSTRUCTIONS = (
    "This server is the user's long-term memory, kept by Cairn as Markdown files in a git "
    "repository: MEMORY.md (curated, durable facts) and daily notes (memory/YYYY-MM-DD.md). "
    "Search it (memory_search) at the start of a task and before you answer anything about "
    "earlier work, decisions, preferences, people, dates, names, identifiers or to-dos; cite "
    "what you use as `Source: <citation>`. Save (memory_append) what the user will want "
    "remembered in a later session: a decision and its reason, a preference, a fact about a "
    "person or a project, a to-do, a command or fix that worked. One self-contained fact per "
    "line, with names and dates. Never save secrets, small talk, or what the repository itself "
    "already says. Every write is a git commit that names you, and the user can revert it."
)

SEARCH_DESCRIPTION = (
    "Search the user's long-term memory (MEMORY.md and the daily notes) by meaning and by exact "
    "words. Call it before answering about prior work, decisions, dates, people, preferences, "
    "identifiers or to-dos, and at the start of a task. Returns the best snippets, each with a "
    "citation (path#Lx-Ly), a score and its vector and text scores. If nothingRelevant is "
    "true, memory holds nothing on it: say you checked; do not invent a memory. Query: key "
    "words or a short question (at most 2,000 characters)."
)
GET_DESCRIPTION = (
    "Read exact lines of a memory file: MEMORY.md or memory/<name>.md (daily notes are "
    "memory/YYYY-MM-DD.md). Bounded: at most `lines` lines from line `from`; nextFrom says "
    "where to read on. A missing file reads as empty. Read a file before memory_write."
)
APPEND_DESCRIPTION = (
    "Save durable facts to the user's memory: appended to today's daily note unless `path` "
    "names another memory/<name>.md. Save a decision and why, a preference, a fact about a "
    "person or project, a to-do, a command or fix that worked: one self-contained fact per "
    "line ('- 2026-12-01: the deploy window moved to Friday 14:00'). Not secrets (they are "
    "redacted), not small talk, not what the repository already holds. Lines already there are "
    "skipped; each write is one git commit naming you."
)
WRITE_DESCRIPTION = (
    "Rewrite a curated memory file (MEMORY.md or memory/<name>.md) with its complete new "
    "content, to reorganise or correct it when the user asks. Read it with memory_get first: the "
    "write is refused if the file changed since. For new facts use memory_append. One git "
    "commit naming you."
)
DESCRIPTIONS = {
    "memory_search": SEARCH_DESCRIPTION,
    "memory_get": GET_DESCRIPTION,
    "memory_append": APPEND_DESCRIPTION,
    "memory_write": WRITE_DESCRIPTION,
}
WRITING = frozenset({"memory_append", "memory_write", "dream_accept", "dream_reject"})
"""The tools that change memory: none is offered under `--read-only`."""


@dataclass(frozen=True)
class Offer:
    """The tools of one `cairn mcp`, in the order a client lists them."""

    toolbox: Toolbox
    read_only: bool

    @property
    def tools(self) -> list[Tool]:
        return list(self.toolbox)


def offer(
    settings: Settings,
    *,
    files: MemoryFiles,
    recall: RecallService,
    dreamer: Dreamer,
    history: MemoryHistory,
    window: int,
    origin: Callable[[], str],
    read_only: bool,
) -> Offer:
    """The tools for a client: every one, or with `read_only` those that only read."""
    memory = memory_tools(files, today=settings.today, origin=origin, reason="mcp")
    tools: Sequence[Tool] = [
        recall.tool(),
        *memory,
        *review_tools(dreamer, window=window, origin=origin, writes=not read_only),
        history_tool(history),
    ]
    described = [
        replace(tool, description=DESCRIPTIONS.get(tool.name, tool.description)) for tool in tools
    ]
    offered = [tool for tool in described if not (read_only and tool.name in WRITING)]
    return Offer(Toolbox(offered, timer=settings.timer), read_only)

"""The `memory_search` tool: the model-facing wrapper around `MemorySearch`.

It validates the model's arguments (untrusted) before anything runs, syncs a dirty index off the
event loop when asked to, runs the search in a worker thread, and returns the result's JSON
payload. When the index may be stale (the sync failed, or files changed since), the payload says
so and a warning Notice goes out with the SearchPerformed event.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from shell.events import Event, Notice
from shell.memory.search.request import (
    DEFAULT_MAX_RESULTS,
    MAX_QUERY_CHARS,
    MAX_RESULTS_LIMIT,
    describe_error,
    validate_request,
)
from shell.memory.search.result import DEFAULT_MIN_SCORE
from shell.tools.toolbox import CallContext, Tool, ToolResult, json_result

if TYPE_CHECKING:
    from shell.memory.index.memory_index import MemoryIndex
    from shell.memory.search.result import SearchResult

TOOL_NAME = "memory_search"
DESCRIPTION = (
    "Search long-term memory (MEMORY.md and memory/*.md daily notes) by meaning and by "
    "exact words. Run it before answering about prior work, decisions, dates, people, "
    "preferences, identifiers or todos. Returns the best matching snippets with a "
    "citation (path#Lx-Ly) each. If nothingRelevant is true, memory holds nothing on "
    "the topic: say you checked, and do not invent an answer. Query: 1 to "
    f"{MAX_QUERY_CHARS:,} characters; key words or a short question work best."
)


def parameters_schema() -> dict[str, Any]:
    """The JSON schema of the tool's arguments (a fresh dict for every tool)."""
    return {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "minLength": 1,
                "description": "What to look for: a question, key words or an identifier.",
            },
            "maxResults": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_RESULTS_LIMIT,
                "default": DEFAULT_MAX_RESULTS,
                "description": "How many hits to return at most.",
            },
            "minScore": {
                "type": "number",
                "minimum": 0,
                "maximum": 1,
                "default": DEFAULT_MIN_SCORE,
                "description": "The score (0 to 1) a hit needs; lower it to see weaker hits.",
            },
        },
        "required": ["query"],
        "additionalProperties": False,
    }


class Searcher(Protocol):
    """What the tool needs of a search: `MemorySearch`, or a stand-in that builds one lazily."""

    @property
    def index(self) -> MemoryIndex: ...

    def search(self, query: str, *, max_results: int, min_score: float) -> SearchResult: ...


def search_tool(
    searcher: Searcher,
    *,
    before_search: Callable[[], list[Event]] | None = None,
) -> Tool:
    """The `memory_search` tool.

    Args:
        searcher: the search to run.
        before_search: called before each valid search, off the event loop (e.g. to sync a
            dirty index); its events come first in `ToolResult.events`, then SearchPerformed.
    """

    async def run(arguments: dict[str, Any], _context: CallContext) -> ToolResult:
        query = arguments.get("query")
        max_results = arguments.get("maxResults", DEFAULT_MAX_RESULTS)
        min_score = arguments.get("minScore", DEFAULT_MIN_SCORE)
        validate_request(query, max_results, min_score)
        events: list[Event] = []
        sync_failure: str | None = None
        if before_search is not None:
            try:
                events.extend(await asyncio.to_thread(before_search))
            except Exception as error:  # a failed sync still lets the old index answer
                sync_failure = describe_error(error)
        result = await asyncio.to_thread(
            searcher.search, str(query), max_results=max_results, min_score=min_score
        )
        payload = result.to_model_json()
        if sync_failure is not None or _is_dirty(searcher):
            events.append(_mark_stale(payload, sync_failure))
        events.append(result.to_event())
        return json_result(payload, events)

    return Tool(name=TOOL_NAME, description=DESCRIPTION, parameters=parameters_schema(), run=run)


def _mark_stale(payload: dict[str, Any], sync_failure: str | None) -> Notice:
    """Flag `payload` as possibly stale, and the warning Notice that goes with it."""
    warning = "memory files changed since the index was last synced; results may be stale"
    if sync_failure:
        warning = f"the index sync failed ({sync_failure}); results may be stale"
    payload["stale"] = True
    payload["note"] = f"{payload['note']} Warning: {warning}."
    return Notice(message=f"{TOOL_NAME}: {warning}", level="warning")


def _is_dirty(searcher: Searcher) -> bool:
    try:
        return bool(searcher.index.is_dirty())
    except Exception:  # a staleness probe must not fail the search it qualifies
        return False

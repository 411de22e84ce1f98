"""A memory_search request: its bounds, their checks, and how a failure reads. Light on
purpose: the tool's schema and argument checks need none of the search machinery (numpy)."""

from __future__ import annotations

import math
from typing import Any

from shell.tools.toolbox import ToolError

MAX_QUERY_CHARS = 2_000
MAX_RESULTS_LIMIT = 50
DEFAULT_MAX_RESULTS = 6


class SearchError(ToolError):
    """memory_search cannot run: bad arguments, or both retrieval legs failed."""


def validate_request(query: Any, max_results: Any, min_score: Any) -> str:
    """Check one request's arguments and return the stripped query.

    Raises:
        SearchError: with a model-facing reason when an argument is out of bounds.
    """
    if not isinstance(query, str):
        raise SearchError("query must be a string")
    stripped = query.strip()
    if not stripped:
        raise SearchError("query is empty: say what to look for, e.g. 'deploy procedure'")
    if len(stripped) > MAX_QUERY_CHARS:
        raise SearchError(
            f"query is {len(stripped):,} characters; the limit is {MAX_QUERY_CHARS:,}. "
            "Search with the key words or a short question instead of pasting text."
        )
    if isinstance(max_results, bool) or not isinstance(max_results, int):
        raise SearchError(f"maxResults must be an integer from 1 to {MAX_RESULTS_LIMIT}")
    if not 1 <= max_results <= MAX_RESULTS_LIMIT:
        raise SearchError(f"maxResults is {max_results}; it must be from 1 to {MAX_RESULTS_LIMIT}")
    if isinstance(min_score, bool) or not isinstance(min_score, int | float):
        raise SearchError("minScore must be a number from 0 to 1")
    if not math.isfinite(min_score) or not 0.0 <= min_score <= 1.0:
        raise SearchError(f"minScore is {min_score}; it must be from 0 to 1")
    return stripped


def describe_error(error: BaseException) -> str:
    """An exception as one short line for a reason or a log: `Type: first line of message`."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    text = text[:300]
    return f"{type(error).__name__}: {text}" if text else type(error).__name__

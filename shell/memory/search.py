"""memory_search: hybrid recall over the memory index.

The pipeline: validate → vector leg (embed the query, cosine top-k) and keyword leg (BM25
top-k) → relevance 0.7·vector + 0.3·text → keep relevance ≥ min_score → score = relevance ×
decay of dated daily notes (30-day half-life) → MMR re-rank with near-duplicate drop → cited
hits. The ranking math lives in `shell.memory.ranking`, the result types and the payload the
model sees in `shell.memory.search_result`, and the tool wrapper in `shell.memory.search_tool`;
this module orchestrates, degrades, times and reports.

What it does differently from OpenClaw's builtin engine (openclaw-memory.md §4, §9):

* The candidate pool per leg is fixed (`CANDIDATE_POOL`), not `maxResults × 4`. OpenClaw's pool
  grew with maxResults, so asking for more results could change the top hit (#134604). Here the
  ranking is computed once over the same pool and cut afterwards: the top hit never depends on
  `max_results`, and a smaller result list is always a prefix of a larger one.
* It abstains. When nothing reaches `min_score`, `nothing_relevant` is set and the model is told
  plainly that memory holds nothing relevant (OpenClaw returns the least bad hits, #147349).
* Degradation is explicit: a failed leg yields `mode` "keyword-only" or "vector-only" with a
  `degraded_reason`; both failing is a clear error, never a silent empty list.
* `min_score` applies before decay, so decay orders old against new but never hides an old
  note; and when no stored word matches the query (a paraphrase), the cosine carries the whole
  relevance instead of being capped at 0.7 of it.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from shell.memory import ranking
from shell.memory.index import KeywordSearchUnavailable
from shell.memory.search_result import (
    DEFAULT_MIN_SCORE,
    MODE_HYBRID,
    MODE_KEYWORD_ONLY,
    MODE_VECTOR_ONLY,
    NOTHING_RELEVANT,
    SearchHit,
    SearchResult,
)
from shell.tools import ToolError

__all__ = [
    "CANDIDATE_POOL",
    "DEFAULT_MAX_RESULTS",
    "DEFAULT_MIN_SCORE",
    "MAX_QUERY_CHARS",
    "MAX_RESULTS_LIMIT",
    "MMR_POOL",
    "MODE_HYBRID",
    "MODE_KEYWORD_ONLY",
    "MODE_VECTOR_ONLY",
    "NOTHING_RELEVANT",
    "SNIPPET_CHARS",
    "MemorySearch",
    "SearchError",
    "SearchHit",
    "SearchResult",
    "describe_error",
    "search_tool",
    "validate_request",
]

if TYPE_CHECKING:
    from shell.memory.chunking import Chunk
    from shell.memory.index import MemoryIndex
    from shell.memory.recall import RecallTracker
    from shell.memory.search_tool import search_tool

MAX_QUERY_CHARS = 2_000
MAX_RESULTS_LIMIT = 50
DEFAULT_MAX_RESULTS = 6
CANDIDATE_POOL = 4 * MAX_RESULTS_LIMIT
"""Candidates per leg, the same for every request. OpenClaw used `min(200, maxResults × 4)`, so
its pool (and with it the top hit) changed with maxResults (#134604). Four times the largest
allowed `max_results` keeps the old headroom for every request and makes rankings comparable."""
MMR_POOL = MAX_RESULTS_LIMIT
"""MMR runs over this many best passing candidates (again independent of `max_results`)."""
SNIPPET_CHARS = 700

logger = logging.getLogger(__name__)


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


class MemorySearch:
    """Hybrid search over a `MemoryIndex`.

    Args:
        index: the memory index (its embedder embeds the query).
        recall: where surfaced hits are recorded for dreaming; None records nothing.
        clock: the current time for temporal decay and recall stamps (UTC now by default).
    """

    def __init__(
        self,
        index: MemoryIndex,
        *,
        recall: RecallTracker | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self._index = index
        self._recall = recall
        self._clock = clock or (lambda: datetime.now(UTC))

    @property
    def index(self) -> MemoryIndex:
        return self._index

    def search(
        self,
        query: str,
        *,
        max_results: int = DEFAULT_MAX_RESULTS,
        min_score: float = DEFAULT_MIN_SCORE,
    ) -> SearchResult:
        """Run one search.

        Args:
            query: what to look for (1 to 2,000 characters).
            max_results: how many hits to return at most (1 to 50).
            min_score: the relevance a hit needs before recency decay (0 to 1); when nothing
                reaches it the result abstains (`nothing_relevant`).

        Raises:
            SearchError: bad arguments, or neither the vector nor the keyword leg could run.
        """
        query = validate_request(query, max_results, min_score)
        timings: dict[str, float] = {}
        started = time.perf_counter()

        vector, vector_error = self._vector_leg(query, timings)
        keyword, keyword_error = self._keyword_leg(query, timings)
        if vector_error and keyword_error:
            raise SearchError(
                f"memory search is unavailable: the vector leg failed ({vector_error}) and the "
                f"keyword leg failed ({keyword_error})"
            )
        if vector_error:
            mode, reason, weights = MODE_KEYWORD_ONLY, vector_error, (0.0, 1.0)
        elif keyword_error:
            mode, reason, weights = MODE_VECTOR_ONLY, keyword_error, (1.0, 0.0)
        elif not keyword:
            # No stored text shares a word with the query (a paraphrase): the cosine carries the
            # whole score, as in vector-only mode. Capped at 0.7·cosine, a pure paraphrase would
            # need a cosine of 0.5 to reach the default min_score, which MiniLM rarely gives.
            mode, reason, weights = MODE_HYBRID, None, (1.0, 0.0)
        else:
            mode, reason, weights = MODE_HYBRID, None, (ranking.VECTOR_WEIGHT, ranking.TEXT_WEIGHT)

        merge_started = time.perf_counter()
        hits, best = self._rank(vector, keyword, weights, max_results, min_score)
        timings["merge"] = _ms_since(merge_started)
        timings["total"] = _ms_since(started)

        result = SearchResult(
            query=query,
            mode=mode,
            hits=hits,
            degraded_reason=reason,
            nothing_relevant=not hits,
            timings_ms=timings,
            best_score=best,
            min_score=float(min_score),
            keyword_matched=bool(keyword),
        )
        if self._recall is not None and hits:
            recall_started = time.perf_counter()
            try:
                self._recall.record(query, hits)
            except OSError as error:  # recall feeds dreaming; losing one record is not fatal
                logger.warning("recall tracking failed: %s", describe_error(error))
            timings["recall"] = _ms_since(recall_started)
        return result

    def _vector_leg(
        self, query: str, timings: dict[str, float]
    ) -> tuple[list[tuple[str, float]], str | None]:
        started = time.perf_counter()
        try:
            qvec = self._index.embedder.embed_query(query)
        except Exception as error:  # a missing or broken model degrades, never crashes
            timings["embed"] = _ms_since(started)
            return [], f"the embedder failed ({describe_error(error)})"
        timings["embed"] = _ms_since(started)
        started = time.perf_counter()
        try:
            found = self._index.vector_candidates(qvec, CANDIDATE_POOL)
        except Exception as error:
            return [], f"vector search failed ({describe_error(error)})"
        finally:
            timings["vector"] = _ms_since(started)
        return found, None

    def _keyword_leg(
        self, query: str, timings: dict[str, float]
    ) -> tuple[list[tuple[str, float]], str | None]:
        started = time.perf_counter()
        try:
            found = self._index.keyword_candidates(query, CANDIDATE_POOL)
        except KeywordSearchUnavailable as error:  # the FTS index is lost; a sync rebuilds it
            return [], f"keyword leg unavailable ({error.reason})"
        except Exception as error:
            return [], f"keyword search failed ({describe_error(error)})"
        finally:
            timings["keyword"] = _ms_since(started)
        return found, None

    def _rank(
        self,
        vector: Sequence[tuple[str, float]],
        keyword: Sequence[tuple[str, float]],
        weights: tuple[float, float],
        max_results: int,
        min_score: float,
    ) -> tuple[list[SearchHit], float | None]:
        merged = ranking.blend(
            dict(vector),
            {chunk_id: ranking.normalise_bm25(raw) for chunk_id, raw in keyword},
            vector_weight=weights[0],
            text_weight=weights[1],
        )
        if not merged:
            return [], None
        # min_score filters relevance before decay: decay orders old against new, it must not
        # hide an old note. Filtered after decay (OpenClaw), an exact match in a 6-week-old note
        # (0.8 × 0.38) would fall under the default 0.35, and memory would forget in weeks.
        relevant = [s for s in merged if s.score >= min_score]
        passing = self._decayed_top(relevant)
        order = ranking.mmr_order(
            [final for final, _, _ in passing],
            [ranking.word_tokens(chunk.text) for _, _, chunk in passing],
            limit=max_results,
        )
        hits = []
        for i in order:
            final, scored, chunk = passing[i]
            hits.append(
                SearchHit(
                    path=chunk.path,
                    start_line=chunk.start_line,
                    end_line=chunk.end_line,
                    score=final,
                    vector_score=scored.vector_score,
                    text_score=scored.text_score,
                    snippet=ranking.snippet(chunk.text, SNIPPET_CHARS),
                    citation=ranking.citation(chunk.path, chunk.start_line, chunk.end_line),
                )
            )
        return hits, merged[0].score

    def _decayed_top(
        self, relevant: Sequence[ranking.Scored]
    ) -> list[tuple[float, ranking.Scored, Chunk]]:
        """The MMR_POOL best candidates by decayed score, with their chunks, best first.

        `relevant` is sorted by relevance and decay never raises a score, so the walk stops at
        the first candidate whose relevance is under the worst decayed score kept so far: it and
        everything after it cannot get in. Usually only the first block is fetched.
        """
        now = self._clock()
        kept: list[tuple[float, ranking.Scored, Chunk]] = []
        for start in range(0, len(relevant), MMR_POOL):
            block = relevant[start : start + MMR_POOL]
            if len(kept) >= MMR_POOL and block[0].score < kept[MMR_POOL - 1][0]:
                break
            chunks = self._index.chunks([scored.chunk_id for scored in block])
            for scored in block:
                chunk = chunks.get(scored.chunk_id)
                if chunk is None:  # removed by a sync between the legs and the fetch
                    continue
                kept.append((scored.score * ranking.decay_factor(chunk.path, now), scored, chunk))
            kept.sort(key=lambda item: (-item[0], item[1].chunk_id))
            del kept[MMR_POOL:]
        return kept


def describe_error(error: BaseException) -> str:
    """An exception as one short line for a reason or a log: `Type: first line of message`."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    text = text[:300]
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


def __getattr__(name: str) -> Any:
    # `search_tool` moved to shell.memory.search_tool, which imports this module; a plain
    # re-export here would be circular, so it resolves on first use instead.
    if name == "search_tool":
        from shell.memory.search_tool import search_tool

        return search_tool
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

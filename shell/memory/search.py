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

import numpy as np

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
from shell.memory.timeframe import TimeFrame, in_frame, time_frame
from shell.memory.windows import adjacent_similarity, grow_window
from shell.tools import ToolError

__all__ = [
    "CANDIDATE_POOL",
    "DEFAULT_MAX_RESULTS",
    "DEFAULT_MIN_SCORE",
    "MAX_QUERY_CHARS",
    "MAX_RESULTS_LIMIT",
    "MODE_HYBRID",
    "MODE_KEYWORD_ONLY",
    "MODE_VECTOR_ONLY",
    "NOTHING_RELEVANT",
    "RANK_POOL",
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
RANK_POOL = MAX_RESULTS_LIMIT
"""The passing candidates ordered in full (again independent of `max_results`)."""
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

        qvec, vector, vector_error = self._vector_leg(query, timings)
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
        hits, best, frame = self._rank(
            query, qvec, vector, keyword, weights, max_results, min_score
        )
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
            time_frame=frame,
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
    ) -> tuple[np.ndarray | None, list[tuple[str, float]], str | None]:
        started = time.perf_counter()
        try:
            qvec = np.asarray(self._index.embedder.embed_query(query), dtype=np.float32)
        except Exception as error:  # a missing or broken model degrades, never crashes
            timings["embed"] = _ms_since(started)
            return None, [], f"the embedder failed ({describe_error(error)})"
        timings["embed"] = _ms_since(started)
        started = time.perf_counter()
        try:
            found = self._index.vector_candidates(qvec, CANDIDATE_POOL)
        except Exception as error:
            return None, [], f"vector search failed ({describe_error(error)})"
        finally:
            timings["vector"] = _ms_since(started)
        return qvec, found, None

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
        query: str,
        qvec: np.ndarray | None,
        vector: Sequence[tuple[str, float]],
        keyword: Sequence[tuple[str, float]],
        weights: tuple[float, float],
        max_results: int,
        min_score: float,
    ) -> tuple[list[SearchHit], float | None, TimeFrame | None]:
        merged = ranking.blend(
            dict(vector),
            {chunk_id: ranking.normalise_bm25(raw) for chunk_id, raw in keyword},
            vector_weight=weights[0],
            text_weight=weights[1],
        )
        if not merged:
            return [], None, None
        now = self._clock()
        frame = time_frame(query, now.date())
        # min_score filters relevance (an absolute measure), never the ordering signals: recency
        # and the time a query names order the relevant hits, they cannot hide or add one.
        relevant = [s for s in merged if s.score >= min_score]
        raw = dict(keyword)
        text_weight = 1.0 - ranking.ORDER_VECTOR_WEIGHT if weights[0] else 1.0
        scale = (text_weight if weights[1] else 0.0, max(raw.values(), default=0.0))
        order = ranking.ordering_score
        relevant.sort(
            key=lambda s: (-order(s.vector_score, raw.get(s.chunk_id, 0.0), scale), s.chunk_id)
        )
        candidates = self._index.chunks([s.chunk_id for s in relevant[:RANK_POOL]])
        files = _FileCache(self._index, qvec if weights[0] else None, raw, scale)
        ranked = []
        for scored in relevant[:RANK_POOL]:
            chunk = candidates.get(scored.chunk_id)
            if chunk is None:  # removed by a sync between the legs and the fetch
                continue
            base = order(scored.vector_score, raw.get(chunk.id, 0.0), scale)
            day = ranking.note_date(chunk.path)
            final = (
                base
                + ranking.NEIGHBOUR_WEIGHT * files.neighbour_support(chunk)
                + ranking.RECENCY_WEIGHT * ranking.decay_factor(chunk.path, now)
                + (ranking.FRAME_BOOST if frame and in_frame(day, frame, grace_days=3) else 0.0)
            )
            ranked.append((final, scored, chunk))
        ranked.sort(key=lambda item: (-item[0], item[1].chunk_id))
        ranked = newer_first(ranked, [final >= ranking.FRAME_BOOST for final, _, _ in ranked])
        return self._windows(ranked, files, frame, max_results), merged[0].score, frame

    def _windows(
        self,
        ranked: Sequence[tuple[float, ranking.Scored, Chunk]],
        files: _FileCache,
        frame: TimeFrame | None,
        max_results: int,
    ) -> list[SearchHit]:
        """Best first, each hit's unit grown into its window; a unit another hit already cites
        adds nothing, and a window repeating a chosen one's words (a near-duplicate) is dropped."""
        hits: list[SearchHit] = []
        chosen: list[frozenset[str]] = []
        for _, scored, chunk in ranked:
            units, adjacent, taken = files.get(chunk.path)
            center = next((i for i, u in enumerate(units) if u.id == chunk.id), None)
            if center is None or center in taken:
                continue
            window = grow_window(units, adjacent, center, taken)
            cited = window.units(units)
            text = "\n".join(u.text for u in cited)
            words = ranking.word_tokens(text)
            if any(ranking.jaccard(words, other) >= ranking.DUPLICATE_JACCARD for other in chosen):
                continue
            taken.update(range(window.first, window.last + 1))
            chosen.append(words)
            day = ranking.note_date(chunk.path)
            start, end = cited[0].start_line, cited[-1].end_line
            hits.append(
                SearchHit(
                    path=chunk.path,
                    start_line=start,
                    end_line=end,
                    score=scored.score,
                    vector_score=scored.vector_score,
                    text_score=scored.text_score,
                    snippet=text,
                    citation=ranking.citation(chunk.path, start, end),
                    date=day.isoformat() if day else None,
                    in_time_frame=bool(frame and in_frame(day, frame, grace_days=3)),
                )
            )
            if len(hits) == max_results:
                break
        return hits


def newer_first(
    ranked: Sequence[tuple[float, ranking.Scored, Chunk]], groups: Sequence[object] | None = None
) -> list[tuple[float, ranking.Scored, Chunk]]:
    """`ranked`, but a newer note that restates a hit (`SUPERSEDE_JACCARD` of its words) moves
    just ahead of it: what was written later supersedes, however the two scores compare. Only
    within one group: a note outside the time a query names never jumps one inside it."""
    groups = groups if groups is not None else [None] * len(ranked)
    words = [ranking.word_tokens(chunk.text) for _, _, chunk in ranked]
    days = [ranking.note_date(chunk.path) for _, _, chunk in ranked]
    placed: set[int] = set()
    order: list[int] = []
    for i in range(len(ranked)):
        if i in placed:
            continue
        newer = [
            j
            for j in range(i + 1, len(ranked))
            if j not in placed
            and days[i] is not None
            and days[j] is not None
            and days[j] > days[i]
            and groups[j] == groups[i]
            and ranking.jaccard(words[i], words[j]) >= ranking.SUPERSEDE_JACCARD
        ]
        for j in [*sorted(newer, key=lambda j: days[j], reverse=True), i]:
            placed.add(j)
            order.append(j)
    return [ranked[i] for i in order]


class _FileCache:
    """The units of each file a search touches, their adjacency and the lines already cited."""

    def __init__(
        self,
        index: MemoryIndex,
        qvec: np.ndarray | None,
        raw: dict[str, float],
        scale: tuple[float, float],
    ) -> None:
        self._index = index
        self._qvec = qvec
        self._raw = raw
        self._scale = scale
        self._files: dict[str, tuple[list[Chunk], np.ndarray, set[int], np.ndarray]] = {}

    def _load(self, path: str) -> tuple[list[Chunk], np.ndarray, set[int], np.ndarray]:
        if path not in self._files:
            units, vectors = self._index.file_units(path)
            cosines = (
                vectors @ self._qvec
                if self._qvec is not None
                else np.zeros(len(units), dtype=np.float32)
            )
            scores = np.array(
                [
                    ranking.ordering_score(float(c), self._raw.get(u.id, 0.0), self._scale)
                    for u, c in zip(units, cosines, strict=True)
                ]
            )
            self._files[path] = (units, adjacent_similarity(vectors), set(), scores)
        return self._files[path]

    def get(self, path: str) -> tuple[list[Chunk], np.ndarray, set[int]]:
        units, adjacent, taken, _ = self._load(path)
        return units, adjacent, taken

    def neighbour_support(self, chunk: Chunk) -> float:
        """The mean ordering score of the two best other units in the chunk's window."""
        units, adjacent, _, scores = self._load(chunk.path)
        center = next((i for i, u in enumerate(units) if u.id == chunk.id), None)
        if center is None:
            return 0.0
        window = grow_window(units, adjacent, center, set())
        others = [scores[i] for i in range(window.first, window.last + 1) if i != center]
        return float(np.mean(sorted(others)[-2:])) if others else 0.0


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

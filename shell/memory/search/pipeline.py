"""memory_search: hybrid recall over the memory index.

The pipeline: validate → vector leg (embed the query, cosine top-k over units) and keyword leg
(BM25 top-k over each unit with the one before it), each keyword candidate given its cosine →
relevance 0.7·vector + 0.3·text → keep relevance ≥ min_score → order by match, the window's
support, the time the query names and recency → cite each hit's unit grown into its window
(`shell.memory.search.windows`), dropping units already cited and near-duplicates. The ranking math
lives in `shell.memory.search.ranking`, the time words in `shell.memory.search.timeframe`, what
orders one search's candidates in `shell.memory.search.ordering`, the citing of hits in
`shell.memory.search.citing`, the result types and the payload the model sees in
`shell.memory.search.result`, and the tool wrapper in `shell.memory.search.tool`; this module
orchestrates, degrades, times and reports.

What it does differently from OpenClaw's builtin engine (openclaw-memory.md §4, §9):

* It matches Markdown units and cites windows, instead of scoring fixed 400-token chunks: a fact
  is never averaged with its unrelated neighbours, a dialogue turn is cited with its exchange.
* Recency orders near-equal hits only; it never scales relevance. OpenClaw's multiplicative
  30-day decay pushed month-old answers out of the top hits (LoCoMo hit@5 0.37 with it).
* The candidate pool per leg is fixed (`CANDIDATE_POOL`), not `maxResults × 4`: the top hit never
  depends on `max_results` (#134604), and a smaller result list is a prefix of a larger one.
* It abstains. When nothing reaches `min_score`, `nothing_relevant` is set and the model is told
  plainly that memory holds nothing relevant (OpenClaw returns the least bad hits, #147349).
* Degradation is explicit: a failed leg yields `mode` "keyword-only" or "vector-only" with a
  `degraded_reason`; both failing is a clear error, never a silent empty list. When no stored
  word matches the query (a paraphrase), the cosine carries the whole relevance.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import numpy as np

from shell.events import SearchHit
from shell.memory.citations.check import checked_hits
from shell.memory.citations.source import ProjectSource
from shell.memory.index.reader import KeywordSearchUnavailable
from shell.memory.paths import note_date
from shell.memory.search import ranking
from shell.memory.search.citing import cite
from shell.memory.search.ordering import CandidateOrdering
from shell.memory.search.request import (
    DEFAULT_MAX_RESULTS,
    MAX_QUERY_CHARS,
    MAX_RESULTS_LIMIT,
    SearchError,
    describe_error,
    validate_request,
)
from shell.memory.search.rerank import Reranker
from shell.memory.search.reranked import RERANK_POOL, RERANK_WEIGHT
from shell.memory.search.reranked import rerank as rerank_pool
from shell.memory.search.result import (
    DEFAULT_MIN_SCORE,
    MODE_HYBRID,
    MODE_KEYWORD_ONLY,
    MODE_VECTOR_ONLY,
    NOTHING_RELEVANT,
    SearchResult,
)
from shell.memory.search.timeframe import TimeFrame, in_frame, time_frame
from shell.memory.search.windows import FileViews

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
    "MemorySearch",
    "SearchError",
    "SearchHit",
    "SearchResult",
    "describe_error",
    "validate_request",
]

if TYPE_CHECKING:
    from shell.memory.hit_log import HitLog
    from shell.memory.index.chunking import Chunk
    from shell.memory.index.memory_index import MemoryIndex
    from shell.tools.project.root import ProjectRoot

CANDIDATE_POOL = 4 * MAX_RESULTS_LIMIT
"""Candidates per leg, the same for every request. OpenClaw used `min(200, maxResults × 4)`, so
its pool (and with it the top hit) changed with maxResults (#134604). Four times the largest
allowed `max_results` keeps the old headroom for every request and makes rankings comparable."""
RANK_POOL = MAX_RESULTS_LIMIT
"""The passing candidates ordered in full (again independent of `max_results`)."""

logger = logging.getLogger(__name__)


class MemorySearch:
    """Hybrid search over a `MemoryIndex`.

    Args:
        index: the memory index (its embedder embeds the query).
        hit_log: where surfaced hits are recorded for dreaming; None records nothing.
        clock: the current time for recency, named times and recall stamps (UTC now by default).
        recency_weight: the most recency adds to a hit's order (`ranking.RECENCY_WEIGHT`).
        half_life_days: the age at which that bonus has halved.
        reranker: the cross-encoder that reads the best candidates with the query
            (`shell.memory.search.reranked`); None keeps the hybrid order and relevance.
        project: the project folder the hits' citations of project files are checked against
            (`shell.memory.citations.check`); None marks them unchecked.
        check_citations: False leaves the hits' citations unchecked (a bench's baseline).
    """

    def __init__(
        self,
        index: MemoryIndex,
        *,
        hit_log: HitLog | None = None,
        clock: Callable[[], datetime] | None = None,
        recency_weight: float = ranking.RECENCY_WEIGHT,
        half_life_days: float = ranking.HALF_LIFE_DAYS,
        reranker: Reranker | None = None,
        project: ProjectRoot | None = None,
        check_citations: bool = True,
    ) -> None:
        self._index = index
        self._hit_log = hit_log
        self._clock = clock or (lambda: datetime.now(UTC))
        self._recency = (recency_weight, half_life_days)
        self._reranker = reranker
        self._project = project
        self._check_citations = check_citations

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
        ranked = self._rank(query, qvec, vector, keyword, weights, max_results, min_score, timings)
        hits, best, frame, reranker, rerank_error = ranked
        timings["merge"] = _ms_since(merge_started) - timings.get("rerank", 0.0)
        if self._check_citations and hits:
            checks_started = time.perf_counter()
            hits = checked_hits(hits, ProjectSource(self._project))
            timings["citations"] = _ms_since(checks_started)
        timings["total"] = _ms_since(started)
        if rerank_error is not None:
            reason = "; ".join(r for r in (reason, rerank_error) if r)

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
            reranker=reranker,
        )
        if self._hit_log is not None and hits:
            recall_started = time.perf_counter()
            try:
                self._hit_log.record(query, hits)
            except OSError as error:  # recall feeds dreaming; losing one record is not fatal
                logger.warning("the hit log failed: %s", describe_error(error))
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
        timings: dict[str, float],
    ) -> tuple[list[SearchHit], float | None, TimeFrame | None, str | None, str | None]:
        """The hits, the best relevance, the time named, the reranker that answered and why
        reranking failed (None when it did not, or was not asked)."""
        if qvec is not None and weights[0]:
            vector = self._with_keyword_cosines(qvec, vector, keyword)
        merged = ranking.blend(
            dict(vector),
            {chunk_id: ranking.normalise_bm25(raw) for chunk_id, raw in keyword},
            vector_weight=weights[0],
            text_weight=weights[1],
        )
        if not merged:
            return [], None, None, None, None
        now = self._clock()
        frame = time_frame(query, now.date())
        only_time = frame is not None and ranking.asks_only_about_time(query, frame.text)
        # A query that names only a time ("what happened last week?") is answered by the notes
        # of that time: there is no topic for a cross-encoder to judge.
        rerank = self._reranker is not None and not only_time
        # min_score filters relevance (an absolute measure), never the ordering signals: recency
        # and the time a query names order the relevant hits, they cannot hide or add one.
        relevant = list(merged) if rerank else [s for s in merged if s.score >= min_score]
        if frame is not None and only_time:
            relevant += self._dated_units(frame, qvec, weights[0], {s.chunk_id for s in relevant})
        text_weight = (
            0.0 if not weights[1] else 1.0 - ranking.ORDER_VECTOR_WEIGHT * bool(weights[0])
        )
        ordering = CandidateOrdering(
            raw=dict(keyword),
            text_weight=text_weight,
            best_raw=max((raw for _, raw in keyword), default=0.0),
            qvec=qvec if weights[0] else None,
            frame=frame,
            chunks=self._index.chunks([s.chunk_id for s in relevant]),
            query_words=ranking.naming_words(query),
        )
        relevant.sort(key=lambda s: (-ordering.first_order(s), s.chunk_id))
        best = merged[0].score
        files = FileViews(self._index.file_units, ordering.score_units)
        if not rerank:
            ranked = self._order(relevant[:RANK_POOL], ordering, files, now, {})
            return cite(ranked, files, max_results), best, frame, None, None
        assert self._reranker is not None
        started = time.perf_counter()
        pool = relevant[:RERANK_POOL]
        try:
            reranking = rerank_pool(self._reranker, query, pool, ordering.chunks)
        except Exception as failure:  # a broken model degrades to the hybrid order
            relevant = [s for s in relevant if s.score >= min_score]
            ranked = self._order(relevant[:RANK_POOL], ordering, files, now, {})
            error = f"the reranker failed ({describe_error(failure)})"
            return cite(ranked, files, max_results), best, frame, None, error
        finally:
            timings["rerank"] = _ms_since(started)
        scores = reranking.relevance
        read = reranking.relevant(pool)
        passing = [s for s in read if s.score >= min_score]
        # What the cross-encoder read and passed comes first; when something did, the
        # candidates it did not read follow in the hybrid order, each by its own relevance.
        # When nothing it read passes, the search abstains: the blend is no judge of that.
        tail = [s for s in relevant[len(pool) :] if s.score >= min_score] if passing else []
        ranked = self._order(passing, ordering, files, now, scores)
        ranked += self._order(tail[: RANK_POOL - len(passing)], ordering, files, now, {})
        hits = cite(ranked, files, max_results, scores)
        best = max((s.score for s in read), default=0.0)
        return hits, best, frame, reranking.model, None

    def _with_keyword_cosines(
        self,
        qvec: np.ndarray,
        vector: Sequence[tuple[str, float]],
        keyword: Sequence[tuple[str, float]],
    ) -> list[tuple[str, float]]:
        """The vector leg's candidates and the cosine of every keyword candidate it left out.

        A unit past the vector leg's pool still has a cosine: counted as 0, a turn whose words
        match but whose cosine ranked 201st fell under min_score (LoCoMo hit@10 +0.006)."""
        found = {chunk_id for chunk_id, _ in vector}
        missing = [chunk_id for chunk_id, _ in keyword if chunk_id not in found]
        return [*vector, *self._index.vector_scores(qvec, missing)]

    def _order(
        self,
        candidates: Sequence[ranking.Scored],
        ordering: CandidateOrdering,
        files: FileViews,
        now: datetime,
        reranked: Mapping[str, float],
    ) -> list[tuple[float, bool, ranking.Scored, Chunk]]:
        """The candidates in their final order: match, the cross-encoder's relevance (when it
        read them), window and section support, recency, named time; then a newer note that
        restates a hit moves ahead of it."""
        ranked = []
        for scored in candidates:
            chunk = ordering.chunks.get(scored.chunk_id)
            if chunk is None:  # removed by a sync between the legs and the fetch
                continue
            framed = ordering.framed(chunk.id)
            final = (
                ordering.match(scored.vector_score, chunk.id)
                + ranking.NEIGHBOUR_WEIGHT * files.neighbour_support(chunk)
                + ranking.SECTION_WEIGHT * files.section_support(chunk)
                + self._recency[0]
                * ranking.decay_factor(chunk.path, now, half_life_days=self._recency[1])
                + ranking.FRAME_BOOST * framed
                + RERANK_WEIGHT * reranked.get(chunk.id, 0.0)
            )
            ranked.append((final, framed, scored, chunk))
        ranked.sort(key=lambda item: (-item[0], item[2].chunk_id))
        dated = [(note_date(chunk.path), chunk) for _, _, _, chunk in ranked]
        # only a dated note can restate another: the others' words are never compared
        words = [ranking.word_tokens(chunk.text) if day else frozenset() for day, chunk in dated]
        groups = [framed for _, framed, _, _ in ranked]
        order = ranking.newer_first([day for day, _ in dated], words, groups, ordering.query_words)
        return [ranked[i] for i in order]

    def _dated_units(
        self, frame: TimeFrame, qvec: np.ndarray | None, vector_weight: float, known: set[str]
    ) -> list[ranking.Scored]:
        """Every unit of the notes dated in `frame` not in `known`, scored by its cosine alone:
        when a query asks only what happened then, being from then is what makes it relevant."""
        found = []
        for path in self._index.paths():
            if not in_frame(note_date(path), frame):
                continue
            units, vectors = self._index.file_units(path)
            cosines = vectors @ qvec if qvec is not None else np.zeros(len(units))
            for unit, cosine in zip(units, cosines, strict=True):
                if unit.id not in known:
                    relevance = vector_weight * max(0.0, float(cosine))
                    found.append(ranking.Scored(unit.id, relevance, float(cosine), 0.0))
        return found


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)

"""What a memory search returns, and the JSON payload and event the model and the UI see.

`SearchResult.to_model_json` is what `memory_search` hands the model: the hits with citations,
the mode, and a plain note that tells it how scores were made, when memory holds nothing
relevant (abstain, do not invent), and why a search ran degraded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from shell.events import SearchHit, SearchMode, SearchPerformed
from shell.memory.citations.check import model_marks
from shell.memory.search.timeframe import TimeFrame

DEFAULT_MIN_SCORE = 0.35
"""The relevance a hit needs by default (before recency decay)."""

NOTHING_RELEVANT = "memory holds nothing relevant to this query"

MODE_HYBRID: SearchMode = "hybrid"
MODE_VECTOR_ONLY: SearchMode = "vector-only"
MODE_KEYWORD_ONLY: SearchMode = "keyword-only"


def hit_payload(hit: SearchHit) -> dict[str, Any]:
    """One hit as the model sees it."""
    return {
        **({"date": hit.date, "inTimeFrame": hit.in_time_frame} if hit.date else {}),
        "scope": hit.scope,
        "path": hit.path,
        "startLine": hit.start_line,
        "endLine": hit.end_line,
        "score": round(hit.score, 3),
        "vectorScore": round(hit.vector_score, 3),
        "textScore": round(hit.text_score, 3),
        **({"rerankScore": round(hit.rerank_score, 3)} if hit.rerank_score is not None else {}),
        "snippet": hit.snippet,
        "citation": hit.citation,
        **({"sourceChecks": model_marks(hit.citations)} if hit.citations else {}),
    }


@dataclass(frozen=True)
class SearchResult:
    """What one search found, how (mode), why it degraded, and how long each step took."""

    query: str
    mode: SearchMode
    hits: list[SearchHit]
    degraded_reason: str | None
    nothing_relevant: bool
    timings_ms: dict[str, float] = field(default_factory=dict)
    best_score: float | None = None
    """The best relevance (score before decay) among all candidates, also those under
    `min_score`; None when no candidate was found at all."""
    min_score: float = DEFAULT_MIN_SCORE
    keyword_matched: bool = True
    """False when the keyword leg matched nothing, so the vector similarity alone scored."""
    time_frame: TimeFrame | None = None
    """The time the query named, whose notes were ranked first."""
    reranker: str | None = None
    """The cross-encoder that read the best candidates and reordered them; None when the
    hybrid order answered (reranking off, a time-only query, or the model failed)."""

    @property
    def answered_by(self) -> str:
        """The mode that answered, in words: "hybrid", "hybrid + rerank", "keyword-only"…"""
        return f"{self.mode} + rerank" if self.reranker else self.mode

    def to_event(self) -> SearchPerformed:
        return SearchPerformed(
            query=self.query,
            mode=self.mode,
            hits=list(self.hits),
            timings_ms=dict(self.timings_ms),
            degraded_reason=self.degraded_reason,
            nothing_relevant=self.nothing_relevant,
            reranker=self.reranker,
            time_frame=(
                f"{self.time_frame.text}: {self.time_frame.start} to {self.time_frame.end}"
                if self.time_frame
                else None
            ),
        )

    def to_model_json(self) -> dict[str, Any]:
        """The payload the model sees: hits with citations, the mode and a plain note."""
        return {
            "query": self.query,
            "mode": self.mode,
            "reranked": self.reranker is not None,
            "degradedReason": self.degraded_reason,
            "nothingRelevant": self.nothing_relevant,
            "note": self._note(),
            "results": [hit_payload(hit) for hit in self.hits],
        }

    def _note(self) -> str:
        parts: list[str] = []
        if self.nothing_relevant:
            best = (
                f" (best relevance {self.best_score:.2f} is under minScore {self.min_score:.2f})"
                if self.best_score is not None
                else " (the index returned no candidates at all: it may be empty or not built)"
            )
            # One sentence a model may repeat: Qwen2.5-Coder-1.5B said a second, "do not guess
            # or invent a memory", to the user word for word (the system prompt says it too).
            parts.append(
                f"{NOTHING_RELEVANT}{best}. Tell the user you checked memory and found nothing."
            )
        else:
            parts.append(
                "Best first. Use only what the snippets say; cite as `Source: <citation>`, and "
                "read more lines with memory_get if a snippet is cut."
            )
            parts.append(
                f"score = relevance ({self._relevance_formula()}); minScore applies to it. "
                "Hits are ordered by how well they match, notes from the time the query names "
                "first, and newer notes first among near-equals. `date` is the day of the note "
                "a hit comes from: use it to say when something was written."
            )
            if any(hit.citations for hit in self.hits):
                parts.append(
                    "sourceChecks: each citation of a project file in a snippet, checked now "
                    "against the file: fresh (unchanged since written), stale (the cited lines "
                    "changed: read the file before relying on the line), gone (the file or "
                    "lines are missing) or unchecked."
                )
            if self.time_frame is not None:
                frame = self.time_frame
                parts.append(
                    f'The query names a time ("{frame.text}": {frame.start} to {frame.end}); '
                    "hits with inTimeFrame true come from it."
                )
        if self.degraded_reason:
            parts.append(f"Search ran {self.mode}: {self.degraded_reason}.")
        return " ".join(parts)

    def _relevance_formula(self) -> str:
        if self.reranker is not None:
            return "rerankScore: a cross-encoder's reading of the query with each snippet"
        if self.mode == MODE_KEYWORD_ONLY:
            return "textScore"
        if self.mode == MODE_VECTOR_ONLY:
            return "vectorScore"
        if not self.keyword_matched:
            return "vectorScore alone: no stored text shares a word with the query"
        return "0.7·vectorScore + 0.3·textScore"

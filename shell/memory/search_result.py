"""What a memory search returns, and the JSON payload and event the model and the UI see.

`SearchResult.to_model_json` is what `memory_search` hands the model: the hits with citations,
the mode, and a plain note that tells it how scores were made, when memory holds nothing
relevant (abstain, do not invent), and why a search ran degraded.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from shell.events import SearchPerformed
from shell.memory.timeframe import TimeFrame

DEFAULT_MIN_SCORE = 0.35
"""The relevance a hit needs by default (before recency decay)."""

NOTHING_RELEVANT = "memory holds nothing relevant to this query"

MODE_HYBRID = "hybrid"
MODE_VECTOR_ONLY = "vector-only"
MODE_KEYWORD_ONLY = "keyword-only"


@dataclass(frozen=True)
class SearchHit:
    """One recalled chunk.

    `score` is the final (blended, decayed) score; `vector_score` is the raw cosine and
    `text_score` the normalised BM25 of the two legs (0 when that leg did not find it).
    """

    path: str
    start_line: int
    end_line: int
    score: float
    vector_score: float
    text_score: float
    snippet: str
    citation: str
    date: str | None = None
    """The date of the daily note the hit comes from (ISO), None for undated files."""
    in_time_frame: bool = False
    """True when that date lies in the time the query named."""
    unit: str = ""
    """The id of the unit that matched (`Chunk.id`: path, lines and text hash), which the
    window around it cites; the hit log counts recalls by it."""

    def to_model_dict(self) -> dict[str, Any]:
        return {
            **({"date": self.date, "inTimeFrame": self.in_time_frame} if self.date else {}),
            "path": self.path,
            "startLine": self.start_line,
            "endLine": self.end_line,
            "score": round(self.score, 3),
            "vectorScore": round(self.vector_score, 3),
            "textScore": round(self.text_score, 3),
            "snippet": self.snippet,
            "citation": self.citation,
        }


@dataclass(frozen=True)
class SearchResult:
    """What one search found, how (mode), why it degraded, and how long each step took."""

    query: str
    mode: str
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

    def to_event(self) -> SearchPerformed:
        return SearchPerformed(
            query=self.query,
            mode=self.mode,
            hits=[asdict(hit) for hit in self.hits],
            timings_ms=dict(self.timings_ms),
            degraded_reason=self.degraded_reason,
            nothing_relevant=self.nothing_relevant,
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
            "degradedReason": self.degraded_reason,
            "nothingRelevant": self.nothing_relevant,
            "note": self._note(),
            "results": [hit.to_model_dict() for hit in self.hits],
        }

    def _note(self) -> str:
        parts: list[str] = []
        if self.nothing_relevant:
            best = (
                f" (best relevance {self.best_score:.2f} is under minScore {self.min_score:.2f})"
                if self.best_score is not None
                else " (the index returned no candidates at all: it may be empty or not built)"
            )
            parts.append(
                f"{NOTHING_RELEVANT}{best}. Tell the user you checked memory and found nothing; "
                "do not guess or invent a memory."
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
        if self.mode == MODE_KEYWORD_ONLY:
            return "textScore"
        if self.mode == MODE_VECTOR_ONLY:
            return "vectorScore"
        if not self.keyword_matched:
            return "vectorScore alone: no stored text shares a word with the query"
        return "0.7·vectorScore + 0.3·textScore"

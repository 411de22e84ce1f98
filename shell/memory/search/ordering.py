"""What orders the relevant candidates of one memory search, before and after window support.

`memory_search` (`shell.memory.search.pipeline`) keeps the candidates whose relevance reaches
`min_score` and orders them by match (cosine and BM25, `ranking.ordering_score`), the time the query
names, and then the support of the unit's window and section. `CandidateOrdering` holds what one
search's ordering needs and scores a candidate, or every unit of a file for its window's support
(`shell.memory.search.windows.FileViews`). The terms and their weights are in
`shell.memory.search.ranking`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from shell.memory.paths import note_date
from shell.memory.search import ranking
from shell.memory.search.timeframe import TimeFrame, in_frame

if TYPE_CHECKING:
    from shell.memory.index.chunking import Chunk


@dataclass(frozen=True)
class CandidateOrdering:
    """What orders the relevant candidates of one search (the terms are in `ranking`)."""

    raw: dict[str, float]
    """Raw BM25 by chunk id, from the keyword leg."""
    text_weight: float
    best_raw: float
    qvec: np.ndarray | None
    """The query vector, None when the vector leg has no weight."""
    frame: TimeFrame | None
    chunks: dict[str, Chunk]
    query_words: frozenset[str]
    """The words of the query that name something (`ranking.naming_words`)."""

    def match(self, cosine: float, chunk_id: str) -> float:
        raw = self.raw.get(chunk_id, 0.0)
        return ranking.ordering_score(cosine, raw, (self.text_weight, self.best_raw))

    def framed(self, chunk_id: str) -> bool:
        if self.frame is None:
            return False
        chunk = self.chunks.get(chunk_id)
        day = note_date(chunk.path) if chunk else None
        return in_frame(day, self.frame, grace_days=ranking.FRAME_GRACE_DAYS)

    def first_order(self, scored: ranking.Scored) -> float:
        """The order before the window's support is known, to pick the candidates ranked."""
        framed = ranking.FRAME_BOOST * self.framed(scored.chunk_id)
        return self.match(scored.vector_score, scored.chunk_id) + framed

    def score_units(self, units: Sequence[Chunk], vectors: np.ndarray) -> np.ndarray:
        cosines = vectors @ self.qvec if self.qvec is not None else np.zeros(len(units))
        raw = np.fromiter((self.raw.get(unit.id, 0.0) for unit in units), float, len(units))
        return ranking.ordering_scores(cosines, raw, (self.text_weight, self.best_raw))

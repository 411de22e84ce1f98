"""The rerank step of memory_search: the cross-encoder's reading of the best candidates.

The hybrid legs find candidates; the best `RERANK_POOL` of them by the first order (match and
named time, `ordering.CandidateOrdering.first_order`) are read with the query by the
cross-encoder (`shell.memory.search.rerank`), each as its passage: the note's date, the tail of
the unit before it where the unit continues it, and the unit. The logit becomes a calibrated
relevance in (0, 1), which `min_score` and "nothing relevant" then use in place of the blend of
the legs, and which adds to each hit's order with `RERANK_WEIGHT` (window and section support,
recency and named time still count). The constants were set on three LoCoMo conversations and
checked on the two others and on the other recall corpora (bench/README.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shell.memory.index.chunking import is_heading
from shell.memory.index.coherence import continues
from shell.memory.paths import note_date
from shell.memory.search import ranking
from shell.memory.search.rerank import Reranker, calibrated

if TYPE_CHECKING:
    from shell.memory.index.chunking import Chunk

RERANK_POOL = 12
"""Candidates the cross-encoder reads per search."""
RERANK_WEIGHT = 4.0
"""What the calibrated relevance adds to a hit's order (the match itself is at most 1)."""
LOGIT_SHIFT = -6.2
LOGIT_SCALE = 3.0
"""relevance = sigmoid((logit - LOGIT_SHIFT) / LOGIT_SCALE)."""
BLEND_OFFSET = 0.40
"""A candidate's relevance is the larger of the cross-encoder's and its hybrid blend less this:
the cross-encoder, trained on web questions, misses paraphrases a bi-encoder finds ("how do we
ship to production" against a release runbook: logit -9). A blend of 0.75 (0.35 after the
offset) is one no LoCoMo question reached in another person's notes (their best: 0.745)."""


@dataclass(frozen=True)
class Reranking:
    """One search's rerank: the calibrated relevance of each candidate read, by chunk id."""

    model: str
    relevance: dict[str, float]

    def relevant(self, pool: Sequence[ranking.Scored]) -> list[ranking.Scored]:
        """The candidates it read, each scored by its relevance (`BLEND_OFFSET`), in order."""
        return [
            s._replace(score=max(self.relevance[s.chunk_id], s.score - BLEND_OFFSET))
            for s in pool
            if s.chunk_id in self.relevance
        ]


def passage(chunk: Chunk) -> str:
    """What the cross-encoder reads of a unit: its note's date, the unit before it as the
    keyword leg reads it (`Chunk.context`, at most 100 tokens: a reply is read with what it
    answers), then the unit itself. On three LoCoMo conversations, against the date and the unit
    alone: hit@5 0.896 against 0.885, hit@1 0.734 against 0.723; at about twice the tokens. The
    unit before is read only where the unit continues its topic (`continues`): in a list of
    unrelated facts it lent its answer to the next one ("Priya owns the iOS app." read 0.99 for
    "which port does staging use", the line after the staging database's)."""
    day = note_date(chunk.path)
    dated = f"{day.day} {day:%B %Y}: " if day else ""
    context = chunk.context.strip() if continues(chunk) else ""
    before = f"{context}\n" if context else ""
    return f"{dated}{before}{chunk.text}"


def rerank(
    reranker: Reranker,
    query: str,
    pool: Sequence[ranking.Scored],
    chunks: dict[str, Chunk],
) -> Reranking:
    """Read each candidate of `pool` with the query (a heading alone answers nothing: it is
    left unread, as is a unit a sync removed).

    Raises:
        Exception: whatever the model raised (the caller degrades to the hybrid order).
    """
    read = [
        s.chunk_id
        for s in pool
        if (chunk := chunks.get(s.chunk_id)) is not None and not is_heading(chunk.text)
    ]
    logits = reranker.score(query, [passage(chunks[i]) for i in read])
    relevance = {
        chunk_id: calibrated(float(logit), LOGIT_SHIFT, LOGIT_SCALE)
        for chunk_id, logit in zip(read, logits, strict=True)
    }
    return Reranking(reranker.name, relevance)

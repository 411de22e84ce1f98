"""The ranking math of memory_search, as pure functions.

Nothing here touches the index, the embedder or the clock: callers pass values in, so every
rule (BM25 normalisation, the hybrid weights, temporal decay, MMR) is tested on its own.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from functools import lru_cache
from typing import NamedTuple

VECTOR_WEIGHT = 0.7
TEXT_WEIGHT = 0.3
HALF_LIFE_DAYS = 30.0
MMR_LAMBDA = 0.7
DUPLICATE_JACCARD = 0.8
"""A hit sharing this much of its vocabulary with a better hit repeats it: it is dropped, not
just pushed down, so the model's few result slots go to different facts."""

_DAILY_NOTE = re.compile(
    r"^memory/(?:[^/]+/)*(?P<date>\d{4}-\d{2}-\d{2})(?:-[^/]+)?\.md$", re.IGNORECASE
)
_WORD = re.compile(r"\w+")


class Scored(NamedTuple):
    """One candidate chunk with the scores of both legs and the blended score."""

    chunk_id: str
    score: float
    vector_score: float
    text_score: float


def normalise_bm25(raw: float) -> float:
    """Map a raw BM25 score (higher is better, unbounded) into [0, 1) with r / (1 + r).

    Non-finite and non-positive scores count as no keyword evidence (0.0).
    """
    if not math.isfinite(raw) or raw <= 0:
        return 0.0
    return raw / (1.0 + raw)


def blend(
    vector: Mapping[str, float],
    text: Mapping[str, float],
    *,
    vector_weight: float = VECTOR_WEIGHT,
    text_weight: float = TEXT_WEIGHT,
) -> list[Scored]:
    """Merge the two legs by chunk id: `vector_weight·cosine + text_weight·bm25n`.

    A chunk found by only one leg gets 0 for the other. Cosines below 0 count as 0, so an
    anti-correlated chunk cannot cancel keyword evidence. The result is sorted best first, ties
    broken by chunk id so the order is deterministic.

    Args:
        vector: chunk id → cosine similarity from the vector leg.
        text: chunk id → normalised BM25 in [0, 1) from the keyword leg.
        vector_weight: weight of the vector leg.
        text_weight: weight of the keyword leg.
    """
    merged = []
    for chunk_id in vector.keys() | text.keys():
        v = max(0.0, float(vector.get(chunk_id, 0.0)))
        t = max(0.0, float(text.get(chunk_id, 0.0)))
        merged.append(Scored(chunk_id, vector_weight * v + text_weight * t, v, t))
    merged.sort(key=lambda s: (-s.score, s.chunk_id))
    return merged


@lru_cache(maxsize=8192)
def note_date(path: str) -> date | None:
    """The date of a dated daily note (`memory/[subdirs/]YYYY-MM-DD[-slug].md`), else None."""
    match = _DAILY_NOTE.match(path.replace("\\", "/"))
    if match is None:
        return None
    try:
        return date.fromisoformat(match["date"])
    except ValueError:  # 2026-13-45 looks dated but is not a date: treat as evergreen
        return None


def decay_factor(path: str, now: datetime, *, half_life_days: float = HALF_LIFE_DAYS) -> float:
    """How much a chunk from `path` still counts at `now`: `0.5 ** (age_days / half_life)`.

    Only dated daily notes decay, measured from UTC midnight of the note's date. MEMORY.md and
    every undated file are evergreen (1.0). A note dated in the future does not gain weight.
    """
    day = note_date(path)
    if day is None:
        return 1.0
    written = datetime(day.year, day.month, day.day, tzinfo=UTC)
    current = now if now.tzinfo is not None else now.replace(tzinfo=UTC)
    age_days = max(0.0, (current - written).total_seconds() / 86_400)
    return 0.5 ** (age_days / half_life_days)


def word_tokens(text: str) -> frozenset[str]:
    """The set of lowercase word tokens of `text` (NFC-normalised, Unicode-aware)."""
    return frozenset(_WORD.findall(unicodedata.normalize("NFC", text).lower()))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b|; two empty sets are not similar (0.0)."""
    if not a or not b:
        return 0.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


def mmr_order(
    relevance: Sequence[float],
    tokens: Sequence[frozenset[str]],
    *,
    limit: int,
    lam: float = MMR_LAMBDA,
    duplicate_jaccard: float = DUPLICATE_JACCARD,
) -> list[int]:
    """Maximal marginal relevance: pick greedily by `λ·relevance − (1−λ)·max Jaccard(selected)`.

    Relevance is min-max normalised to [0, 1] first. Candidates whose Jaccard similarity to an
    already selected candidate reaches `duplicate_jaccard` are dropped as near-duplicates. The
    selection is greedy, so the first k picks never depend on `limit`: results for a small limit
    are a prefix of the results for a larger one, and the first pick is always the most relevant.

    Args:
        relevance: one score per candidate (higher is better).
        tokens: the word-token set of each candidate, for Jaccard similarity.
        limit: how many candidates to return at most.
        lam: the trade-off between relevance (1.0) and diversity (0.0).
        duplicate_jaccard: the similarity at which a candidate counts as a repeat.

    Returns:
        Indexes into `relevance`, in selection order.
    """
    count = len(relevance)
    if count == 0 or limit <= 0:
        return []
    low, high = min(relevance), max(relevance)
    spread = high - low
    norm = [(r - low) / spread if spread > 0 else 1.0 for r in relevance]
    max_similarity = [0.0] * count
    remaining = set(range(count))
    selected: list[int] = []
    while remaining and len(selected) < limit:
        best = max(
            remaining,
            # ties: the higher raw relevance, then the earlier candidate
            key=lambda i: (lam * norm[i] - (1 - lam) * max_similarity[i], relevance[i], -i),
        )
        selected.append(best)
        remaining.discard(best)
        if len(selected) == limit:
            break
        for i in list(remaining):
            similarity = jaccard(tokens[i], tokens[best])
            if similarity >= duplicate_jaccard:
                remaining.discard(i)
            elif similarity > max_similarity[i]:
                max_similarity[i] = similarity
    return selected


def snippet(text: str, limit: int = 700) -> str:
    """`text` stripped and cut to at most `limit` characters, at a word boundary when it can."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"


def citation(path: str, start_line: int, end_line: int) -> str:
    """`path#Lx-Ly`, the form the model is told to cite."""
    return f"{path}#L{start_line}-L{end_line}"

"""The ranking math of memory_search, as pure functions.

Nothing here touches the index, the embedder or the clock: callers pass values in, so every
rule (BM25 normalisation, the hybrid weights, the ordering score, recency) is tested on its own.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from shell.memory.paths import note_date
from shell.text.stop_words import STOP_WORDS

VECTOR_WEIGHT = 0.7
TEXT_WEIGHT = 0.3
HALF_LIFE_DAYS = 30.0
ORDER_VECTOR_WEIGHT = 0.6
"""In the ordering score, the cosine's weight; BM25 relative to the query's best match gets the
rest. Measured on LoCoMo (bench/locomo): 0.5–0.6 order best, 0.7 costs ~1 point of hit@5."""
NEIGHBOUR_WEIGHT = 0.3
"""How much the two best other units of a hit's window add to its order (+1 point of hit@5 on
LoCoMo: a turn whose exchange is on topic beats a lone turn that shares one word)."""
SECTION_WEIGHT = 0.5
"""How much the best other unit under the same heading adds to a hit's order. Within a section
the order stays as it was (every unit but the best gets the best's score, the best the second's);
across sections, a section about the question wins: +0.018 hit@5 on LoCoMo, where a section is
one session of a conversation."""
RECENCY_WEIGHT = 0.03
"""Recency orders near-equal hits and nothing more: at most +0.03, for today's note, falling
with a 30-day half-life. On LoCoMo 0.02 costs 0.001 of hit@5, 0.1 costs 0.017, and the old
multiplicative decay 0.10 (0.79 → 0.89 without it)."""
FRAME_BOOST = 1.0
"""Added to the order of a note dated in the time a query names: such notes rank first."""
FRAME_GRACE_DAYS = 3
"""A note up to this many days after the named time still counts as from it: notes often tell
of an event a few days later (on LoCoMo 85 of 103 named times hold the answer's note with 3
days of grace, 81 with none)."""
SUPERSEDE_JACCARD = 0.5
"""A newer note sharing this much of a hit's vocabulary restates it, and is shown first."""
DUPLICATE_JACCARD = 0.8
"""A hit sharing this much of its vocabulary with a better hit repeats it: it is dropped, not
just pushed down, so the model's few result slots go to different facts."""

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


BROWSE_WORDS = frozenset(
    """note notes noted write wrote written happen happened happening say said do done doing
    remember remembered talk talked discuss discussed memory memories log logged day week
    month year work worked go went going get got anything something everything new plan
    planned up""".split()
)
"""Words that ask what a time held rather than naming a topic ("what did I note yesterday?")."""


def naming_words(query: str) -> frozenset[str]:
    """The words of a query that name something: its word tokens without question words."""
    return frozenset(w for w in word_tokens(query) if w not in STOP_WORDS)


def asks_only_about_time(query: str, time_words: str) -> bool:
    """True when, without its time words, the query names no topic: "what happened last week?"."""
    rest = query.lower().replace(time_words.lower(), " ")
    words = [w for w in _WORD.findall(rest) if not w.isdigit()]
    return all(w in STOP_WORDS or w in BROWSE_WORDS for w in words)


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


def ordering_score(cosine: float, raw_bm25: float, scale: tuple[float, float]) -> float:
    """How well a unit matches, for ordering the relevant ones: `w·cosine + (1−w)·raw/best_raw`.

    Args:
        cosine: The unit's cosine to the query (negative counts as 0).
        raw_bm25: Its raw BM25 score (0 when the keyword leg did not find it).
        scale: `(1 − w, best_raw)`: the keyword weight and the query's best raw BM25 score.
            Relative to the query's best match, BM25 weighs alike for every query (the absolute
            r/(1+r) of the relevance saturates on long queries and starves short ones).
    """
    text_weight, best = scale
    keyword = raw_bm25 / best if best > 0 and math.isfinite(raw_bm25) else 0.0
    return (1.0 - text_weight) * max(0.0, cosine) + text_weight * max(0.0, keyword)


def ordering_scores(
    cosines: np.ndarray, raw_bm25: np.ndarray, scale: tuple[float, float]
) -> np.ndarray:
    """`ordering_score` of many units at once (a file's units, for their window's support)."""
    text_weight, best = scale
    finite = np.isfinite(raw_bm25) & (best > 0)
    keyword = np.divide(raw_bm25, best, out=np.zeros_like(raw_bm25), where=finite)
    scores = (1.0 - text_weight) * np.maximum(cosines, 0.0) + text_weight * np.maximum(keyword, 0.0)
    return np.asarray(scores, dtype=np.float64)


@lru_cache(maxsize=8192)
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
    return float(0.5 ** (age_days / half_life_days))


def word_tokens(text: str) -> frozenset[str]:
    """The set of lowercase word tokens of `text` (NFC-normalised, Unicode-aware)."""
    return frozenset(_WORD.findall(unicodedata.normalize("NFC", text).lower()))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b|; two empty sets are not similar (0.0)."""
    if not a or not b:
        return 0.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


def newer_first(
    days: Sequence[date | None],
    words: Sequence[frozenset[str]],
    groups: Sequence[object],
    query: frozenset[str] = frozenset(),
) -> list[int]:
    """An order of ranked hits in which a newer note that restates a hit moves just ahead of it.

    A later hit restates an earlier one when their words overlap by `SUPERSEDE_JACCARD`, its
    note is dated later, and it holds every query word the earlier one holds: what was written
    later supersedes, however the two scores compare. That last rule keeps facts of one pattern
    apart: "the code word for project 17 is …" is not restated by "… project 27 is …" when the
    question names 17 (a 1,000-turn soak lost a third of its planted facts without it). Only
    within one group (hits in or out of the time a query names), so a note outside that time
    never jumps one inside it.

    Args:
        days: The note date of each hit in rank order (None for undated files).
        words: The word tokens of each hit.
        groups: A label per hit; only hits with equal labels are compared.
        query: The query's words that name something (`naming_words`).

    Returns:
        Indexes into the inputs, in the new order.
    """
    placed: set[int] = set()
    order: list[int] = []
    for i, day in enumerate(days):
        if i in placed:
            continue
        newer = [
            j
            for j in range(i + 1, len(days))
            if j not in placed
            and day is not None
            and (later := days[j]) is not None
            and later > day
            and groups[j] == groups[i]
            and jaccard(words[i], words[j]) >= SUPERSEDE_JACCARD
            and query & words[i] <= words[j]
        ]
        for j in [*sorted(newer, key=lambda j: days[j] or date.min, reverse=True), i]:
            placed.add(j)
            order.append(j)
    return order


def citation(path: str, start_line: int, end_line: int) -> str:
    """`path#Lx-Ly`, the form the model is told to cite."""
    return f"{path}#L{start_line}-L{end_line}"

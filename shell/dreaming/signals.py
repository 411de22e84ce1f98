"""The deep phase's score of a recalled unit: six signals, weighted, plus the phases' boosts.

OpenClaw's weights and signals (openclaw-memory.md §7.3), each signal between 0 and 1:

- relevance 0.30: the mean relevance of the unit's recalls (what `memory_search` scored);
- frequency 0.24: log1p(recalls) / log1p(`FREQUENCY_FULL`), OpenClaw's REM recall strength;
- query diversity 0.15: distinct queries / `DIVERSITY_FULL`;
- recency 0.15: 0.5 ** (days since the last recall / half-life);
- consolidation 0.10: recall on several days, 0.55·log1p(days − 1)/log1p(4) + 0.45·min(1, span/7);
- conceptual richness 0.06: how many things the unit names (`concepts`) / `RICHNESS_FULL`.

The light and REM phases add at most `LIGHT_BOOST` and `REM_BOOST`:
`max × log1p(hits)/log1p(6) × recency`.

Can these weights propose a fact asked about four ways on a user's first day, and keep out one
recalled once? The gates (≥ 3 recalls, ≥ 3 distinct queries) keep the once-recalled out
whatever the score. A first day has no consolidation (one day), so such a fact scores at most
0.90 before the boosts; measured on the ten planted facts of `bench.dream` (mean relevance
0.49–0.78 from real MiniLM searches), all ten pass 0.75 with the boosts (0.77–0.91) and none
would without them. Four distinct questions are needed: three on one day stay under the gate.
So the weights stay OpenClaw's (bench/README.md has the table).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import date, datetime

from shell.events import Signals
from shell.memory.hit_log import Recall
from shell.memory.search.ranking import naming_words

FREQUENCY_FULL = 6
DIVERSITY_FULL = 4
RICHNESS_FULL = 6
LIGHT_BOOST = 0.06
REM_BOOST = 0.09
BOOST_FULL = 6


WEIGHTS = {
    "relevance": 0.30,
    "frequency": 0.24,
    "diversity": 0.15,
    "recency": 0.15,
    "consolidation": 0.10,
    "richness": 0.06,
}
"""OpenClaw's, by signal (see above for why they stay)."""

_NOT_CONCEPTS = frozenset(
    """takes take took uses use used likes like liked prefers prefer wants want needs need said
    says told asked goes went make made work works after before every still today tomorrow
    yesterday""".split()
)
"""Common verbs and time words; `naming_words` has already dropped the stop words."""


def concepts(text: str) -> frozenset[str]:
    """The words of `text` that name a thing: no stop words or common verbs, three letters or
    more (numbers count)."""
    return frozenset(
        word
        for word in naming_words(text)
        if (len(word) >= 3 or word.isdigit()) and word not in _NOT_CONCEPTS
    )


def signals(
    recalls: Sequence[Recall],
    now: datetime,
    *,
    text: str,
    half_life_days: float,
    light_hits: int = 0,
    rem_hits: int = 0,
) -> Signals:
    """The signals of a unit recalled `recalls` (at least one), as of `now`."""
    days = sorted({date.fromisoformat(recall.day) for recall in recalls})
    last = max(datetime.fromisoformat(recall.at) for recall in recalls)
    age_days = max(0.0, (_aware(now) - _aware(last)).total_seconds() / 86_400)
    recency = 0.5 ** (age_days / half_life_days)
    mean = sum(recall.score for recall in recalls) / len(recalls)
    span = (days[-1] - days[0]).days
    return Signals(
        relevance=_clamp(mean),
        frequency=_clamp(math.log1p(len(recalls)) / math.log1p(FREQUENCY_FULL)),
        diversity=_clamp(len({recall.query for recall in recalls}) / DIVERSITY_FULL),
        recency=recency,
        consolidation=_clamp(
            0.55 * math.log1p(len(days) - 1) / math.log1p(4) + 0.45 * min(1.0, span / 7)
        ),
        richness=_clamp(len(concepts(text)) / RICHNESS_FULL),
        light=LIGHT_BOOST * _boost(light_hits) * recency,
        rem=REM_BOOST * _boost(rem_hits) * recency,
    )


def score(found: Signals) -> float:
    """The weighted signals plus the phases' boosts, at most 1."""
    weighted = sum(weight * float(getattr(found, name)) for name, weight in WEIGHTS.items())
    return min(1.0, weighted + found.light + found.rem)


def _boost(hits: int) -> float:
    return _clamp(math.log1p(hits) / math.log1p(BOOST_FULL))


def _clamp(value: float) -> float:
    return max(0.0, min(1.0, value))


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.astimezone()

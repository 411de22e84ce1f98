"""The deep phase: rank what keeps being recalled, and let through only what passes every gate.

A recalled unit becomes a candidate when it is a unit of a daily note of the last `max_age_days`
days that is still there (an older note may have been overtaken since: 102 of 162 proposals on
real conversations came from notes up to 240 days old, one contradicted by later notes), is a
sentence about the user's world (`junk`), is not in MEMORY.md already nor rejected before, and
its recalls of those days number at least `min_recalls` from `min_queries`
distinct queries and score at least `min_score` (`signals`). A recall counts where the unit was
among its search's best answers (`answers`), not a weak hit beside them. Every unit stopped is
counted under the first reason that stopped it, so a sweep that proposes nothing says why
(#96118).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime

import numpy as np

from shell.config import DreamSettings
from shell.dreaming import signals as scoring
from shell.dreaming.facts import fact_of
from shell.dreaming.junk import junk_kind, statement
from shell.dreaming.notes import Notes, NoteUnit
from shell.events import JunkKind, Signals, Stopped, StopReason
from shell.memory.hit_log import Recall, RecalledUnit
from shell.memory.paths import note_date
from shell.text import normalized

KNOWN_SIMILARITY = 0.9
"""A unit this alike (cosine) to a MEMORY.md unit is already known."""
ANSWER_SHARE = 0.85
"""A recall counts when its relevance is at least this share of its search's best hit. A weak
second hit (a neighbour of the topic) is no recall of what the search asked: on the synthetic
year of `bench.dream`, "Ben reviewed the billing design doc" came with four billing questions
(0.54–0.62 against the answer's 0.72–0.82) and was proposed without this."""


@dataclass(frozen=True)
class Known:
    """What a proposal must not repeat."""

    memory_lines: frozenset[str] = frozenset()
    """MEMORY.md's lines as `normalized` statements."""
    memory_vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 1), np.float32))
    rejected: frozenset[str] = frozenset()
    """Source keys and normalized texts of rejected proposals."""
    accepted: frozenset[str] = frozenset()
    """Source keys of accepted proposals."""
    dreamed: frozenset[str] = frozenset()
    """Normalized lines dreaming wrote."""
    embed: Callable[[Sequence[str]], np.ndarray] | None = None
    """Vectors of bare statements, as `memory_vectors` holds MEMORY.md's."""

    @classmethod
    def of(
        cls,
        memory: str,
        *,
        rejected: Iterable[str],
        accepted: Iterable[str],
        dreamed: Iterable[str],
        embed: Callable[[Sequence[str]], np.ndarray],
    ) -> Known:
        """What MEMORY.md (its text `memory`) and dreaming's state hold; MEMORY.md's facts are
        compared by their bare statements (`bare`), through `embed`."""
        facts = [bare(line) for line in memory.splitlines() if line.strip() and not junk_kind(line)]
        return cls(
            memory_lines=frozenset(
                normalized(statement(line)) for line in memory.splitlines() if line.strip()
            ),
            memory_vectors=embed(facts) if facts else cls().memory_vectors,
            rejected=frozenset(rejected),
            accepted=frozenset(accepted),
            dreamed=frozenset(dreamed),
            embed=embed,
        )

    def holds(self, text: str, vector: np.ndarray | None = None) -> bool:
        """Whether MEMORY.md states `text` already: word for word, or (given the vector of its
        bare statement, `bare`) as a paraphrase."""
        if normalized(statement(text)) in self.memory_lines:
            return True
        if vector is None or not len(self.memory_vectors):
            return False
        return bool((self.memory_vectors @ vector).max() >= KNOWN_SIMILARITY)

    def vectors(self, texts: Sequence[str]) -> list[np.ndarray | None]:
        """The vectors of `texts`' bare statements, or Nones without an embedder."""
        if self.embed is None or not texts or not len(self.memory_vectors):
            return [None] * len(texts)
        return list(self.embed([bare(text) for text in texts]))


def bare(text: str) -> str:
    """What a note's unit or MEMORY.md's line states, compared by content: the fact alone
    (`facts.fact_of`), no bullet, heading, speaker or closing full stop."""
    line = statement(text)
    return (fact_of(line) or line).rstrip(".!")


@dataclass(frozen=True)
class Candidate:
    """A recalled unit that passed every gate, with what scored it."""

    unit: NoteUnit
    recalls: tuple[Recall, ...]
    signals: Signals
    score: float

    @property
    def queries(self) -> int:
        return len({recall.query for recall in self.recalls})

    @property
    def days(self) -> int:
        return len({recall.day for recall in self.recalls})


@dataclass(frozen=True)
class DeepSleep:
    passed: list[Candidate]
    """Best first."""
    ranked: int
    """Units scored (those not stopped before the score was needed)."""
    stopped: Counter[tuple[StopReason, JunkKind | None]]

    def stops(self) -> list[Stopped]:
        return [
            Stopped(reason, count, junk)
            for (reason, junk), count in sorted(self.stopped.items(), key=lambda i: -i[1])
        ]


def deep_sleep(
    recalled: Sequence[RecalledUnit],
    notes: Notes,
    now: datetime,
    settings: DreamSettings,
    *,
    light: Mapping[str, int],
    rem: Mapping[str, int],
    known: Known,
) -> DeepSleep:
    stopped: Counter[tuple[StopReason, JunkKind | None]] = Counter()
    passed: list[Candidate] = []
    ranked = 0
    gated: list[tuple[NoteUnit, tuple[Recall, ...]]] = []
    for entry in recalled:
        unit = _admit(entry, notes, now.date(), settings, known)
        if not isinstance(unit, NoteUnit):
            stopped[unit] += 1
            continue
        recalls = answers(_recent(entry.recalls, now.date(), settings.max_age_days))
        if len(recalls) < settings.min_recalls:
            stopped[("recalls", None)] += 1
            continue
        if len({recall.query for recall in recalls}) < settings.min_queries:
            stopped[("queries", None)] += 1
            continue
        gated.append((unit, recalls))
    vectors = known.vectors([unit.chunk.text for unit, _ in gated])
    for (unit, recalls), vector in zip(gated, vectors, strict=True):
        if known.holds(unit.chunk.text, vector):  # a paraphrase of a MEMORY.md line
            stopped[("known", None)] += 1
            continue
        ranked += 1
        found = scoring.signals(
            recalls,
            now,
            text=statement(unit.chunk.text),
            half_life_days=settings.recency_half_life_days,
            light_hits=light.get(unit.key, 0),
            rem_hits=rem.get(unit.key, 0),
        )
        total = scoring.score(found)
        if total < settings.min_score:
            stopped[("score", None)] += 1
            continue
        passed.append(Candidate(unit, recalls, found, total))
    passed.sort(key=lambda c: (-c.score, c.unit.key))
    return DeepSleep(passed, ranked, stopped)


def _admit(
    entry: RecalledUnit, notes: Notes, today: date, settings: DreamSettings, known: Known
) -> NoteUnit | tuple[StopReason, JunkKind | None]:
    """The note unit of a recalled entry, or why it can be no candidate at all."""
    day = note_date(entry.path)
    if day is None:
        return "not_a_note", None
    if (today - day).days > settings.max_age_days or not _recent(
        entry.recalls, today, settings.max_age_days
    ):
        return "too_old", None
    unit = notes.find(entry.path, entry.unit_hash)
    if unit is None:
        return "gone", None
    if (junk := junk_kind(unit.chunk.text, known.dreamed)) is not None:
        return "junk", junk
    if unit.key in known.accepted or known.holds(unit.chunk.text):
        return "known", None
    if unit.key in known.rejected or normalized(statement(unit.chunk.text)) in known.rejected:
        return "rejected", None
    return unit


def answers(recalls: Sequence[Recall]) -> tuple[Recall, ...]:
    """The recalls in which the unit was among its search's best answers (`ANSWER_SHARE`)."""
    return tuple(r for r in recalls if r.score >= ANSWER_SHARE * r.best)


def _recent(recalls: Sequence[Recall], today: date, max_age_days: int) -> tuple[Recall, ...]:
    return tuple(r for r in recalls if (today - date.fromisoformat(r.day)).days <= max_age_days)

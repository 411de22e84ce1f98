"""The REM phase: reflect on a week of notes. Recurring themes (what the notes keep naming, on
how many days) and candidate truths (recalled facts, with OpenClaw's confidence); it never writes
MEMORY.md. A fact among the truths, or naming a theme, gets the deep phase's REM boost."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from shell.config import DreamSettings
from shell.dreaming.deep import answers
from shell.dreaming.junk import junk_kind, statement
from shell.dreaming.notes import Notes, NoteUnit, similar_groups
from shell.dreaming.signals import concepts
from shell.events import CandidateTruth, RemSleepFinished, Theme
from shell.memory.hit_log import RecalledUnit

THEMES_SHOWN = 5
THEME_MIN_DAYS = 2


@dataclass(frozen=True)
class RemSleep:
    event: RemSleepFinished
    hits: dict[str, int]
    """Per unit key: 1 if its fact is a candidate truth, plus the themes it names."""


def rem_sleep(
    notes: Notes,
    recalled: Sequence[RecalledUnit],
    today: date,
    settings: DreamSettings,
    dreamed: Collection[str],
) -> RemSleep:
    days = notes.dated(today, settings.rem_lookback_days)
    units = [
        unit
        for _, path in days
        for unit in notes.units(path)
        if junk_kind(unit.chunk.text, dreamed) is None
    ]
    themes = _themes(units)
    theme_words = {theme.word for theme in themes}
    since = (today - timedelta(days=settings.rem_lookback_days - 1)).isoformat()
    truths, truth_keys = _truths(notes, recalled, since, settings, dreamed)
    hits = {
        unit.key: (unit.key in truth_keys) + len(concepts(unit.chunk.text) & theme_words)
        for unit in units
    }
    event = RemSleepFinished(
        since=since,
        until=today.isoformat(),
        notes=len(days),
        themes=themes[:THEMES_SHOWN],
        truths=truths,
    )
    return RemSleep(event, {key: count for key, count in hits.items() if count})


def _themes(units: Sequence[NoteUnit]) -> list[Theme]:
    mentions: Counter[str] = Counter()
    days: dict[str, set[date]] = defaultdict(set)
    for unit in units:
        for word in concepts(unit.chunk.text):
            if word.isdigit():
                continue
            mentions[word] += 1
            if unit.day is not None:
                days[word].add(unit.day)
    recurring = [
        Theme(word, mentions[word], len(days[word]))
        for word in mentions
        if len(days[word]) >= THEME_MIN_DAYS
    ]
    return sorted(recurring, key=lambda t: (-t.days, -t.mentions, t.word))


def _truths(
    notes: Notes,
    recalled: Sequence[RecalledUnit],
    since: str,
    settings: DreamSettings,
    dreamed: Collection[str],
) -> tuple[list[CandidateTruth], set[str]]:
    """Recalled facts of the week with OpenClaw's REM confidence, deduplicated, best first."""
    scored: list[tuple[float, NoteUnit]] = []
    for entry in recalled:
        recalls = [recall for recall in answers(entry.recalls) if recall.day >= since]
        unit = notes.find(entry.path, entry.unit_hash) if recalls else None
        if unit is None or unit.day is None or junk_kind(unit.chunk.text, dreamed) is not None:
            continue
        average = sum(recall.score for recall in recalls) / len(recalls)
        confidence = (
            0.45 * average
            + 0.25 * min(1.0, math.log1p(len(recalls)) / math.log1p(6))
            + 0.20 * min(1.0, len({recall.day for recall in recalls}) / 3)
            + 0.10 * min(1.0, len(concepts(unit.chunk.text)) / 6)
        )
        if confidence >= settings.rem_min_confidence:
            scored.append((confidence, unit))
    scored.sort(key=lambda item: (-item[0], item[1].key))
    confidence_of = {unit.key: confidence for confidence, unit in scored}
    groups = similar_groups([unit for _, unit in scored], settings.rem_dedupe_similarity)
    kept = [group[0] for group in groups][: settings.rem_limit]
    truths = [
        CandidateTruth(
            statement(unit.chunk.text), unit.source.citation, round(confidence_of[unit.key], 3)
        )
        for unit in kept
    ]
    return truths, {unit.key for group in groups[: settings.rem_limit] for unit in group}

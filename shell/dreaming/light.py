"""The light phase: stage the last days' notes. Near-duplicates are merged and each fact's
reinforcement counted (restated in another line, recalled by a search); it never writes
MEMORY.md. Its counts boost the deep phase's score (`signals.LIGHT_BOOST`)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from shell.config import DreamSettings
from shell.dreaming.junk import junk_kind, statement
from shell.dreaming.notes import Notes, similar_groups
from shell.events import LightSleepFinished, Reinforced
from shell.memory.hit_log import RecalledUnit

SHOWN = 5
"""Reinforced facts the phase's event (and DREAMS.md) lists."""


@dataclass(frozen=True)
class LightSleep:
    event: LightSleepFinished
    hits: dict[str, int]
    """Per unit key: the times its fact was restated or recalled in the phase's days."""


def light_sleep(
    notes: Notes,
    recalled: Sequence[RecalledUnit],
    today: date,
    settings: DreamSettings,
    dreamed: Collection[str],
) -> LightSleep:
    days = notes.dated(today, settings.light_lookback_days)
    units = [
        unit
        for _, path in reversed(days)  # newest first, so the limit keeps the latest
        for unit in notes.units(path)
        if junk_kind(unit.chunk.text, dreamed) is None
    ][: settings.light_limit]
    since = (today - timedelta(days=settings.light_lookback_days - 1)).isoformat()
    recent = {unit.key: sum(recall.day >= since for recall in unit.recalls) for unit in recalled}
    groups = similar_groups(units, settings.light_dedupe_similarity)
    hits: dict[str, int] = {}
    reinforced: list[Reinforced] = []
    for group in groups:
        restated = len(group) - 1
        recalls = sum(recent.get(unit.key, 0) for unit in group)
        for unit in group:
            hits[unit.key] = restated + recalls
        if restated + recalls:
            head = group[0]
            reinforced.append(
                Reinforced(statement(head.chunk.text), head.source.citation, restated, recalls)
            )
    reinforced.sort(key=lambda r: (-(r.restated + r.recalled), r.citation))
    event = LightSleepFinished(
        since=since,
        until=today.isoformat(),
        notes=len(days),
        units=len(units),
        merged=sum(len(group) - 1 for group in groups),
        reinforced=reinforced[:SHOWN],
    )
    return LightSleep(event, hits)

"""The workspace `bench.dream` sweeps: a synthetic year of notes and the hit log of its searches.

`write_year` writes 365 daily notes of filler with the planted facts and the junk lines of
`bench.dream_year` among them, and records where each went (`Year`). `fill_hit_log` then fills the
hit log in the order of time, on a `Clock` the bench moves: the planted questions through the
real `memory_search`, the once-recalled facts, the junk recalled often, and background searches
at the scores a weak match gets.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from bench.dream_year import JUNK, ONCE_QUESTION, PLANTED, Planted, filler_line
from shell.memory.paths import daily_note
from shell.memory.search.result import SearchHit
from shell.memory.service import RecallService

NOW = datetime(2026, 11, 30, 18, 0, tzinfo=UTC)
DAYS = 365
LINES_PER_NOTE = 20


@dataclass
class Clock:
    now: datetime = NOW

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Year:
    """Where each planted line went (path, line) and what the run measured."""

    planted: dict[tuple[str, int], Planted] = field(default_factory=dict)
    junk: dict[tuple[str, int], str] = field(default_factory=dict)
    once: list[tuple[str, int]] = field(default_factory=list)
    surfaced: int = 0
    asked: int = 0
    record_ms: list[float] = field(default_factory=list)


def day_of(offset: int) -> date:
    return NOW.date() - timedelta(days=offset)


def write_year(root: Path, rng: random.Random, year: Year) -> None:
    """365 notes of filler, with the planted facts, the once-recalled facts and the junk among
    them; committed once (the bench measures the sweep, not 7,300 commits)."""
    notes: dict[int, list[str]] = {
        offset: [filler_line(rng) for _ in range(LINES_PER_NOTE)] for offset in range(DAYS)
    }
    for planted in PLANTED:
        lines = notes[planted.note_age]
        at = rng.randrange(len(lines))
        lines.insert(at, f"- {planted.fact}")
    for _kind, text, age in JUNK:
        notes[age].insert(rng.randrange(len(notes[age])), text)
    folder = root / "memory"
    for offset, lines in notes.items():
        path = daily_note(day_of(offset))
        (folder / f"{day_of(offset).isoformat()}.md").write_text("\n".join(lines) + "\n")
        for number, line in enumerate(lines, start=1):
            if planted_fact := next((p for p in PLANTED if line == f"- {p.fact}"), None):
                year.planted[(path, number)] = planted_fact
            elif kind := next((k for k, text, _ in JUNK if text == line), None):
                year.junk[(path, number)] = kind
    once_pool = [
        (daily_note(day_of(offset)), number)
        for offset in range(DAYS)
        for number in range(1, LINES_PER_NOTE + 1)
    ]
    year.once = [
        spot
        for spot in rng.sample(once_pool, 200)
        if spot not in year.planted and spot not in year.junk
    ][:50]


def fill_hit_log(
    recall: RecallService, clock: Clock, rng: random.Random, year: Year, total: int
) -> None:
    """The hit log, in the order of time: planted questions through the real search, the rest
    as records of what a search surfaced."""
    log = recall.hit_log
    assert log is not None
    units = {path: recall.index.file_units(path)[0] for path in recall.index.paths()}

    def hit(path: str, line: int, relevance: float) -> SearchHit:
        unit = next(u for u in units[path] if u.start_line <= line <= u.end_line)
        citation = f"{path}#L{unit.start_line}"
        return SearchHit(
            path,
            unit.start_line,
            unit.end_line,
            relevance,
            relevance,
            0.0,
            unit.text,
            citation,
            unit=unit.id,
        )

    def recorded(query: str, hits: list[SearchHit]) -> Callable[[], None]:
        def record() -> None:
            started = time.perf_counter()
            log.record(query, hits)
            year.record_ms.append((time.perf_counter() - started) * 1000)

        return record

    def searched(question: str, path: str, line: int) -> Callable[[], None]:
        def search() -> None:
            result = recall.searcher.search(question)
            year.asked += 1
            year.surfaced += any(
                h.path == path and h.start_line <= line <= h.end_line for h in result.hits
            )

        return search

    schedule: list[tuple[datetime, Callable[[], None]]] = []
    for (path, line), planted in year.planted.items():
        for question, age in zip(planted.questions, planted.asked_ages, strict=True):
            when = NOW - timedelta(days=age, hours=rng.randrange(1, 9))
            schedule.append((when, searched(question, path, line)))
    for index, (path, line) in enumerate(year.once):
        when = NOW - timedelta(days=rng.randrange(0, 25), hours=rng.randrange(1, 9))
        schedule.append((when, recorded(ONCE_QUESTION.format(index), [hit(path, line, 0.75)])))
    for index, (path, line) in enumerate(year.junk):
        for asked, age in enumerate((20, 9, 9, 2)):
            when = NOW - timedelta(days=age, hours=asked + 1)
            schedule.append((when, recorded(f"junk {index}.{asked}", [hit(path, line, 0.8)])))
    paths = sorted(units)
    while len(schedule) < total:
        when = NOW - timedelta(days=rng.randrange(0, DAYS), minutes=rng.randrange(1, 600))
        picks = [rng.choice(paths) for _ in range(rng.randint(1, 5))]
        hits = [
            hit(path, rng.randrange(1, units[path][-1].end_line + 1), rng.uniform(0.35, 0.6))
            for path in picks
        ]
        schedule.append((when, recorded(f"background query {len(schedule)}", hits)))
    for when, run_it in sorted(schedule, key=lambda item: item[0]):
        clock.now = when
        run_it()
    clock.now = NOW

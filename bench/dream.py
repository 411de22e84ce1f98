"""Dreaming on a synthetic year: does a sweep propose what it should, and nothing else, fast?

Run: `python -m bench.dream [--json] [--searches 5000] [--seed 7]`. See bench/README.md.

The bench writes 365 daily notes of about 20 lines (facts made from templates), indexes them
with the real embedder, and fills the hit log with 5,000 searches:

- 10 planted facts, each asked about by four differently worded questions on two or three days
  of the last month, through the real `memory_search` (so their scores are what MiniLM gives);
- 50 facts recalled once, at a high score;
- 20 junk lines recalled often (four questions on three days, at a high score): small talk, a
  flush prompt, redacted lines, shell commands, headings with no body, lines carrying score
  metadata, a question, a request to the assistant, and three lines of the DREAMS.md block an
  earlier sweep (40 days before) wrote, copied into later notes;
- the rest background: random units at the scores a weak match gets, one query each.

Then one full sweep without a model (folding the log, three phases, DREAMS.md and its commit)
is timed, and its proposals are sorted into planted, junk, once-recalled and other. Recording
a search's hits is timed against the store it replaced (a JSON rewrite with an fsync per search).
The weights table scores each planted fact as if its four questions had come on one day (a new
user's first day), with OpenClaw's weights and with Cairn's.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("LANCEDB_LOG", "error")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.dream_year import (
    DREAM_ECHO_AGES,
    JUNK,
    ONCE_QUESTION,
    PLANTED,
    Planted,
    filler_line,
    old_hit_log,
)
from shell.config import DreamSettings, Settings
from shell.dreaming import Dreamer
from shell.dreaming.signals import score, signals
from shell.events import DeepSleepFinished, DreamProposed, DreamSweepFinished, Event
from shell.memory.files import MemoryFiles
from shell.memory.hit_log import Recall
from shell.memory.paths import daily_note
from shell.memory.search_result import SearchHit
from shell.memory.service import RecallService
from shell.workspace import init_workspace

NOW = datetime(2026, 11, 30, 18, 0, tzinfo=UTC)
DAYS = 365
LINES_PER_NOTE = 20
TARGET_SWEEP_S = 5.0
TARGET_RECORD_MS = 1.0


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


def echo_dreams(root: Path, dreamer: Dreamer, clock: Clock, year: Year) -> None:
    """A sweep 40 days before, then three lines of its DREAMS.md block copied into later notes,
    as a model or a person pasting them would (OpenClaw re-ingested its own output, #79699)."""
    from shell.dreaming.diary import END

    clock.now = NOW - timedelta(days=40)
    sweep(dreamer)
    clock.now = NOW
    block = (root / "DREAMS.md").read_text().split(END)[0].splitlines()
    diary = next(line for line in block if line.startswith("Read "))
    echoes = [
        next(line for line in block if line.startswith("### Light sleep")),
        next(line for line in block if " ranked, " in line),
        diary.split(". ")[0] + ".",
    ]
    for age, echo in zip(DREAM_ECHO_AGES, echoes, strict=True):
        note = root / "memory" / f"{day_of(age).isoformat()}.md"
        lines = note.read_text().splitlines()
        line = echo if echo.startswith(("#", "-")) else f"- {echo}"
        note.write_text("\n".join([*lines, line]) + "\n")
        year.junk[(daily_note(day_of(age)), len(lines) + 1)] = "dreams block"
    dreamer.recall.sync("manual")


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


def sweep(dreamer: Dreamer) -> tuple[list[Event], float]:
    async def run() -> list[Event]:
        return [event async for event in dreamer.sweep("cli", window=8192)]

    started = time.perf_counter()
    events = asyncio.run(run())
    return events, time.perf_counter() - started


def classify(events: list[Event], year: Year) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {"planted": [], "junk": [], "once": [], "other": []}
    for event in events:
        if not isinstance(event, DreamProposed):
            continue
        source = event.proposal.sources[0]
        spot = (source.path, source.start_line)
        kind = (
            "planted"
            if spot in year.planted
            else "junk"
            if spot in year.junk
            else "once"
            if spot in year.once
            else "other"
        )
        found[kind].append(event.proposal.text)
    return found


def first_day_scores(year: Year, dreamer: Dreamer) -> list[dict[str, Any]]:
    """Each planted fact's four recalls (their real scores) as if asked on one day, scored with
    the light and REM boosts a first day's sweep gives them, and without."""
    assert dreamer.recall.hit_log is not None
    rows = []
    for unit in dreamer.recall.hit_log.recalled():
        planted = next(
            (
                p
                for (path, line), p in year.planted.items()
                if path == unit.path and unit.start_line <= line <= unit.end_line
            ),
            None,
        )
        if planted is None:
            continue
        scores = [recall.score for recall in unit.recalls][:4]
        today = [Recall(NOW.isoformat(), f"q{i}", s, s) for i, s in enumerate(scores)]

        def scored(boosted: bool, today: list[Recall] = today, planted: Planted = planted) -> float:
            found = signals(
                today,
                NOW,
                text=planted.fact,
                half_life_days=14,
                light_hits=len(today) if boosted else 0,
                rem_hits=1 if boosted else 0,
            )
            return score(found)

        rows.append(
            {
                "fact": planted.fact,
                "questions": len(scores),
                "mean": statistics.fmean(scores),
                "boosted": scored(True),
                "unboosted": scored(False),
            }
        )
    return rows


def old_store_ms(records: int, rng: random.Random, folder: Path) -> list[float]:
    """The store the hit log replaced, on the same shape of searches."""
    store = old_hit_log(folder)
    times = []
    for index in range(records):
        hits = [
            (f"memory/n{rng.randrange(DAYS)}.md", rng.randrange(1, 21), rng.uniform(0.35, 0.6))
            for _ in range(rng.randint(1, 5))
        ]
        started = time.perf_counter()
        store(f"query {index}", hits)
        times.append((time.perf_counter() - started) * 1000)
    return times


def run(searches: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    year = Year()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        clock = Clock()
        settings = Settings(
            workspace=root, embedder="minilm", watch=False, clock=clock, dreaming=DreamSettings()
        )
        git = init_workspace(settings)
        write_year(root, rng, year)
        git.commit(["memory"], "bench: a synthetic year of notes")
        recall = RecallService(settings)
        started = time.perf_counter()
        recall.sync("manual")
        index_s = time.perf_counter() - started
        dreamer = Dreamer(settings, files=MemoryFiles(root, git), git=git, recall=recall, llm=None)
        echo_dreams(root, dreamer, clock, year)
        fill_hit_log(recall, clock, rng, year, searches)
        events, sweep_s = sweep(dreamer)
        found = classify(events, year)
        (deep,) = [e for e in events if isinstance(e, DeepSleepFinished)]
        (finished,) = [e for e in events if isinstance(e, DreamSweepFinished)]
        weights = first_day_scores(year, dreamer)
        old = old_store_ms(min(searches, 1000), random.Random(seed), Path(tmp) / "old")
        recall.index.close()
    return {
        "notes": DAYS,
        "searches": searches,
        "index_s": round(index_s, 1),
        "sweep_s": round(sweep_s, 2),
        "record_p50_ms": round(statistics.median(year.record_ms), 3),
        "record_p99_ms": round(statistics.quantiles(year.record_ms, n=100)[-1], 3),
        "old_record_p50_ms": round(statistics.median(old), 3),
        "planted_surfaced": f"{year.surfaced}/{year.asked}",
        "proposed": {kind: len(texts) for kind, texts in found.items()},
        "planted_missing": sorted(
            {p.fact for p in year.planted.values()} - {t.rstrip(".") for t in found["planted"]}
        ),
        "junk_proposed": found["junk"],
        "other_proposed": found["other"],
        "stopped": [{"reason": s.reason, "junk": s.junk, "count": s.count} for s in deep.stopped],
        "diary": finished.diary,
        "first_day": weights,
    }


def report(result: dict[str, Any]) -> str:
    proposed = result["proposed"]
    lines = [
        f"dreaming on a synthetic year: {result['notes']} notes, {result['searches']:,} searches "
        f"(index built in {result['index_s']} s, not timed below)",
        "",
        "| measure | result | target |",
        "| --- | ---: | ---: |",
        f"| full sweep, no model | {result['sweep_s']} s | ≤ {TARGET_SWEEP_S} s |",
        f"| planted facts proposed | {proposed['planted']}/10 | 10/10 |",
        f"| junk proposed | {proposed['junk']}/{len(JUNK) + len(DREAM_ECHO_AGES)} | 0 |",
        f"| recalled-once proposed | {proposed['once']}/50 | 0 |",
        f"| other proposals | {proposed['other']} | |",
        f"| recording a search's hits, p50 | {result['record_p50_ms']} ms "
        f"| ≤ {TARGET_RECORD_MS} ms |",
        f"| … the store it replaced, p50 | {result['old_record_p50_ms']} ms | |",
        "",
        f"planted questions whose search surfaced the fact: {result['planted_surfaced']}",
        "stopped: "
        + ", ".join(
            f"{s['count']} {s['reason']}" + (f" ({s['junk']})" if s["junk"] else "")
            for s in result["stopped"]
        ),
        f"diary: {result['diary']}",
    ]
    if result["planted_missing"]:
        lines.append("planted but not proposed: " + "; ".join(result["planted_missing"]))
    if result["junk_proposed"]:
        lines.append("junk proposed: " + "; ".join(result["junk_proposed"]))
    if result["other_proposed"]:
        lines.append("other proposals: " + "; ".join(result["other_proposed"]))
    lines += [
        "",
        "a planted fact's questions as if all asked on one day, OpenClaw's weights "
        "(≥ 0.75 passes):",
        "",
        "| fact | questions | mean relevance | with the light/REM boosts | without |",
        "| --- | ---: | ---: | ---: | ---: |",
        *(
            f"| {row['fact']} | {row['questions']} | {row['mean']:.2f} | {row['boosted']:.2f} "
            f"| {row['unboosted']:.2f} |"
            for row in result["first_day"]
        ),
        f"| **passing** | | | {sum(r['boosted'] >= 0.75 for r in result['first_day'])}/"
        f"{len(result['first_day'])} | {sum(r['unboosted'] >= 0.75 for r in result['first_day'])}"
        f"/{len(result['first_day'])} |",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--searches", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(args.searches, args.seed)
    print(json.dumps(result, indent=2, ensure_ascii=False) if args.json else report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

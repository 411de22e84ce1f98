"""Dreaming on a synthetic year: does a sweep propose what it should, and nothing else, fast?

Run: `python -m bench.dream [--json] [--searches 5000] [--seed 7]`. See bench/README.md.
With `--real [--data PATH] [--labels DIR] [--verbose]`: LoCoMo's conversations instead
(`bench.dream_real`).

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

The year's notes and hit log are set up by bench/dream_setup.py, from bench/dream_year.py's facts.
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
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from bench.dream_real import LABELS
from bench.dream_setup import DAYS, NOW, Clock, Year, day_of, fill_hit_log, write_year
from bench.dream_year import DREAM_ECHO_AGES, JUNK, Planted, old_hit_log
from bench.locomo_data import DEFAULT_DATA
from shell.config import DreamSettings, Settings
from shell.dreaming import Dreamer
from shell.dreaming.signals import score, signals
from shell.events import DeepSleepFinished, DreamProposed, DreamSweepFinished, Event
from shell.memory.files.door import MemoryFiles
from shell.memory.hit_log import Recall, dreams_dir
from shell.memory.paths import daily_note
from shell.memory.service import RecallService
from shell.workspace import init_workspace

TARGET_SWEEP_S = 5.0
TARGET_PROCESS_S = 2.0
TARGET_RECORD_MS = 1.0


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


def sweep(dreamer: Dreamer) -> tuple[list[Event], float]:
    async def run() -> list[Event]:
        return [event async for event in dreamer.sweep("cli", window=8192)]

    started = time.perf_counter()
    events = asyncio.run(run())
    return events, time.perf_counter() - started


_PROCESS_SWEEP = """
import asyncio, sys
from datetime import datetime
from pathlib import Path
from shell.build import build_dreamer
from shell.config import Settings
settings = Settings(workspace=Path({root!r}), embedder="minilm", watch=False,
                    clock=lambda: datetime.fromisoformat({now!r}))
dreamer = build_dreamer(settings)
async def main():
    return [event async for event in dreamer.sweep("cli", window=8192)]
asyncio.run(main())
print("lancedb" in sys.modules)
"""


def process_sweep(root: Path, *, cold: bool) -> tuple[float, bool]:
    """A sweep in a process of its own, as `cairn dream` runs it (interpreter, imports, state),
    timed whole; whether it imported LanceDB. `cold`: without dreaming's vector cache."""
    if cold:
        (dreams_dir(root) / "vectors.npz").unlink(missing_ok=True)
    script = _PROCESS_SWEEP.format(root=str(root), now=NOW.isoformat())
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, check=True)
    return time.perf_counter() - started, done.stdout.decode().split()[-1] == "True"


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
        cold = process_sweep(root, cold=True)
        warm = [process_sweep(root, cold=False) for _ in range(3)]
    return {
        "notes": DAYS,
        "searches": searches,
        "index_s": round(index_s, 1),
        "sweep_s": round(sweep_s, 2),
        "process_sweep_s": {
            "cold": round(cold[0], 2),
            "cold_lancedb": cold[1],
            "cached": round(statistics.median(t for t, _ in warm), 2),
            "cached_lancedb": any(imported for _, imported in warm),
        },
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
    process = result["process_sweep_s"]
    lines = [
        f"dreaming on a synthetic year: {result['notes']} notes, {result['searches']:,} searches "
        f"(index built in {result['index_s']} s, not timed below)",
        "",
        "| measure | result | target |",
        "| --- | ---: | ---: |",
        f"| full sweep, no model | {result['sweep_s']} s | ≤ {TARGET_SWEEP_S} s |",
        f"| … in a process of its own, as `cairn dream`, vectors cached (median of 3) "
        f"| {process['cached']} s{' (LanceDB imported)' if process['cached_lancedb'] else ''} "
        f"| ≤ {TARGET_PROCESS_S} s |",
        f"| … the same without dreaming's vector cache | {process['cold']} s"
        f"{' (LanceDB imported)' if process['cold_lancedb'] else ''} | |",
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
    parser.add_argument(
        "--real", action="store_true", help="LoCoMo's conversations instead (bench.dream_real)"
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="with --real")
    parser.add_argument("--labels", type=Path, default=LABELS, help="with --real")
    parser.add_argument(
        "--verbose", action="store_true", help="with --real: each first proposal, on stderr"
    )
    args = parser.parse_args(argv)
    if args.real:
        from bench.dream_real import main as real

        return real(args)
    result = run(args.searches, args.seed)
    print(json.dumps(result, indent=2, ensure_ascii=False) if args.json else report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

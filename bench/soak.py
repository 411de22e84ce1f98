"""A long session with the demo brain: memory, time per turn, flushes, compactions, recall.

    python -m bench.soak [--turns 1000] [--window 3000] [--json]

One agent (headless core, real git, the real index and MiniLM) runs `--turns` turns: every
tenth plants a fact ("remember that the code word for project 17 is …"), the others are filler
chat long enough to fill a small window, so the session flushes and compacts again and again.
Reported: resident memory (RSS) every `--every` turns, time per turn, flush and compaction
counts, and how many planted facts `memory_search` still finds in its top 5 at the end.
Targets: every fact found; memory flat after warm-up (the last sample within 10% of the one
after the first tenth of the run). A short version runs in the tests (`tests/core/test_soak.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from shell import events as ev
from shell.build import build_agent
from shell.config import DEMO_MODEL, Settings
from shell.workspace import init_workspace

FILLER = (
    "Let me think out loud about the weekend: the weather, the long walk along the river, a "
    "book about lighthouses I keep not finishing, and whether the bakery on the corner still "
    "makes those cardamom buns. Nothing to remember here, just talking."
)
WORDS = ["amber", "basalt", "cobalt", "drift", "ember", "fjord", "garnet", "harbor", "iris"]


def code_word(n: int) -> str:
    return f"{WORDS[n % len(WORDS)]}{n}"


def fact(n: int) -> str:
    return f"remember that the code word for project {n} is {code_word(n)}"


@dataclass
class Soak:
    turns: int = 0
    seconds: list[float] = field(default_factory=list)
    rss_mb: list[tuple[int, float]] = field(default_factory=list)
    flushes: dict[str, int] = field(default_factory=dict)
    compactions: int = 0
    compaction_fallbacks: int = 0
    planted: list[int] = field(default_factory=list)
    found: list[int] = field(default_factory=list)


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def tally(soak: Soak, event: ev.BaseEvent) -> None:
    match event:
        case ev.FlushFinished(outcome=outcome):
            soak.flushes[outcome] = soak.flushes.get(outcome, 0) + 1
        case ev.CompactionFinished(fallback=fallback):
            soak.compactions += 1
            soak.compaction_fallbacks += bool(fallback)


async def soak_run(settings: Settings, turns: int, every: int) -> Soak:
    soak = Soak()
    agent = build_agent(settings, index_in_background=False)
    async for _ in agent.start():
        pass
    try:
        for turn in range(1, turns + 1):
            planted = turn % 10 == 1
            prompt = fact(turn) if planted else f"{FILLER} (turn {turn})"
            if planted:
                soak.planted.append(turn)
            started = time.perf_counter()
            async with contextlib.aclosing(agent.submit(prompt)) as stream:
                async for event in stream:
                    tally(soak, event)
            soak.seconds.append(time.perf_counter() - started)
            soak.turns = turn
            if turn % every == 0 or turn == 1:
                soak.rss_mb.append((turn, round(rss_mb(), 1)))
        search = agent.recall.tool()
        for n in soak.planted:
            result = await search.call({"query": f"code word for project {n}", "maxResults": 5})
            if code_word(n) in result.content:
                soak.found.append(n)
    finally:
        await agent.aclose()
    return soak


def report(soak: Soak) -> dict[str, Any]:
    warm = next((mb for turn, mb in soak.rss_mb if turn >= soak.turns // 10), None)
    last = soak.rss_mb[-1][1] if soak.rss_mb else None
    seconds = sorted(soak.seconds)
    return {
        "turns": soak.turns,
        "turn_ms_p50": round(statistics.median(seconds) * 1000, 1) if seconds else None,
        "turn_ms_p95": round(seconds[int(len(seconds) * 0.95) - 1] * 1000, 1) if seconds else None,
        "flushes": soak.flushes,
        "compactions": soak.compactions,
        "compactions_by_rule": soak.compaction_fallbacks,
        "facts_planted": len(soak.planted),
        "facts_found_top5": len(soak.found),
        "facts_missed": [n for n in soak.planted if n not in soak.found],
        "rss_mb": soak.rss_mb,
        "rss_growth_after_warmup": round(last / warm - 1, 3) if warm and last else None,
    }


def soak_settings(workspace: Path, window: int) -> Settings:
    start = datetime(2026, 12, 1, 9, 0).astimezone()
    clock_state = {"now": start}

    def clock() -> datetime:  # a minute passes per call: days pass in a long soak
        clock_state["now"] += timedelta(seconds=20)
        return clock_state["now"]

    settings = Settings(workspace=workspace, model=DEMO_MODEL, context_window=window, watch=False)
    return replace(settings, clock=clock)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--window", type=int, default=3000)
    parser.add_argument("--every", type=int, default=50, help="sample memory every N turns")
    parser.add_argument("--json", action="store_true", help="JSON on stdout")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cairn-soak-") as folder:
        settings = soak_settings(Path(folder) / "workspace", args.window)
        init_workspace(settings)
        result = report(asyncio.run(soak_run(settings, args.turns, args.every)))
    print(json.dumps(result, indent=2), file=sys.stdout if args.json else sys.stderr)
    ok = not result["facts_missed"] and (result["rss_growth_after_warmup"] or 0) <= 0.10
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""How soon a resumed session is usable, against a fresh start's first frame in the same run.

    python -m bench.tui_resume [--turns 50,200] [--runs 5] [--json]

The session: the demo agent of a fresh workspace runs `TEMPLATE` (real turns through the real
core: memory writes committed, searches, plain chat), and a long Markdown answer (the kind a
real model writes) is added as one more turn; then the session's view log is grown to `turns`
turns by appending those turns again, renumbered, through the session's own writer
(`shell.session.views.ViewLog.append`), as a long session would have written them.

Each run copies that workspace (a resume appends to it) and opens the real `CairnApp` on it,
headless (`run_test`, 120×40), with the agent built beforehand (`build_agent(resume=True)`): from
`run_test` entered to the first refresh after the resumed view is usable (the prompt focused and
the resume mark, below the last turn, on screen). The baseline is the first frame of a fresh
start, measured the same way (the agent built beforehand, `run_test` entered to the first
refresh after mount). One untimed round first (Python's caches, litellm's background import),
then the runs interleaved (fresh, then each size), medians. `meter_s`: when the token meter
first shows the resumed context (not 0). Target: resume ≤ 1.5× the fresh first frame.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.startup import CAIRN, compile_cairn, in_terminal, terminal_environment
from bench.tui import ANSWER, bench_settings, wait_until
from shell.build import build_agent
from shell.events import AssistantMessage, Event, TurnFinished, TurnStarted
from shell.session.views import ViewLog
from widgets.app import CairnApp

TARGET_RATIO = 1.5
TIMEOUT_S = 120.0
"""A resume not usable by then counts as never (inf)."""
SIZE = (120, 40)
TEMPLATE = (
    "remember that our deploy window is Friday 14:00",
    "when is our deploy window?",
    "My sister lives in Tromsø.",
    "how are you today?",
    "tell me about the build server",
    "Priya leads the billing migration.",
)
LONG_PROMPT = "walk me through the deploy"
MARK = "— resumed session"
SCREEN_MARK = "resumed session"
"""What a resumed TUI paints below the last earlier turn (at 80 columns the notice wraps)."""
FIRST_FRAME_MARK = "cairn-demo/brain"


def make_session(workspace: Path, turns: int) -> None:
    """A workspace whose latest session shows `turns` turns (see the module's docstring)."""
    workspace.mkdir(parents=True, exist_ok=True)
    asyncio.run(_template(workspace))
    log = ViewLog(workspace / ".cairn" / "sessions")
    session_id = next(log.folder.glob("*.events.jsonl")).name.split(".", 1)[0]
    events = log.read(session_id)
    head = [e for e in events[: _first_turn(events)]]
    groups = _turns(events)
    long_turn: list[Event] = [
        TurnStarted(session_id=session_id, turn=0, prompt=LONG_PROMPT),
        AssistantMessage(text=ANSWER.format(n=1)),
        TurnFinished(turn=0, reason="completed"),
    ]
    groups.append(long_turn)
    log.path(session_id).unlink()
    for event in head:
        log.append(session_id, event)
    for number in range(1, turns + 1):
        for event in groups[(number - 1) % len(groups)]:
            log.append(session_id, _renumbered(event, number))


async def _template(workspace: Path) -> None:
    agent = build_agent(bench_settings(workspace), index_in_background=False)
    try:
        async for _ in agent.start():
            pass
        for prompt in TEMPLATE:
            async for _ in agent.submit(prompt):
                pass
    finally:
        await agent.aclose()


def _first_turn(events: list[Event]) -> int:
    return next((i for i, e in enumerate(events) if isinstance(e, TurnStarted)), len(events))


def _turns(events: list[Event]) -> list[list[Event]]:
    groups: list[list[Event]] = []
    for event in events[_first_turn(events) :]:
        if isinstance(event, TurnStarted):
            groups.append([])
        groups[-1].append(event)
    return groups


def _renumbered(event: Event, number: int) -> Event:
    changes: dict[str, Any] = {}
    if isinstance(event, TurnStarted | TurnFinished):
        changes["turn"] = number
    if isinstance(call_id := getattr(event, "call_id", None), str) and call_id:
        changes["call_id"] = f"{call_id}-{number}"
    return dataclasses.replace(event, **changes) if changes else event  # type: ignore[type-var]


async def _timed(app: CairnApp, ready: Callable[[], bool]) -> dict[str, float]:
    """Seconds from `run_test` entered to the first refresh after `ready()` holds, and to the
    meter showing tokens."""
    gc.collect()  # the runs before left their apps as garbage: not this run's to collect
    start = time.perf_counter()
    painted = asyncio.Event()
    at = meter = 0.0
    async with app.run_test(size=SIZE):
        if not await wait_until(ready, TIMEOUT_S):
            return {"usable_s": float("inf"), "meter_s": float("inf")}

        def mark() -> None:
            nonlocal at
            at = time.perf_counter()
            painted.set()

        app.call_after_refresh(mark)
        await painted.wait()
        await wait_until(lambda: bool(app.status_bar.meter.used), 60)
        meter = time.perf_counter()
    return {"usable_s": at - start, "meter_s": meter - start}


async def fresh_once(root: Path) -> dict[str, float]:
    workspace = root / "fresh"
    shutil.rmtree(workspace, ignore_errors=True)
    workspace.mkdir()
    agent = build_agent(bench_settings(workspace))
    seen = [False]
    app = CairnApp(
        agent, config_dir=root / "config", after_first_frame=lambda: seen.__setitem__(0, True)
    )
    return await _timed(app, lambda: seen[0])


async def resume_once(root: Path, source: Path) -> dict[str, float]:
    workspace = root / "resumed"
    shutil.rmtree(workspace, ignore_errors=True)
    shutil.copytree(source, workspace, symlinks=True)
    agent = build_agent(bench_settings(workspace), resume=True)
    app = CairnApp(agent, config_dir=root / "config")

    def usable() -> bool:
        if not app.is_running or app.focused is not app.prompt:
            return False
        marks = [b for b in app.transcript.blocks if MARK in getattr(b, "text", "")]
        return bool(marks) and marks[-1].region.height > 0  # laid out, on screen

    return await _timed(app, usable)


def in_terminal_runs(root: Path, sessions: dict[int, Path], runs: int) -> dict[str, Any]:
    """Fresh processes in an 80×24 pseudo-terminal (as `bench.startup`), imports included:
    `cairn --demo` to its first frame, `cairn --demo --resume` to the resume mark painted.
    One untimed round, then `runs` interleaved; medians."""
    compile_cairn()
    fresh: list[float] = []
    resumed: dict[int, list[float]] = {count: [] for count in sessions}
    for round_ in range(runs + 1):
        workspace = root / "pty-fresh"
        shutil.rmtree(workspace, ignore_errors=True)
        env = terminal_environment(workspace)
        first = in_terminal([*CAIRN, "--demo"], env, [FIRST_FRAME_MARK])[0]
        times = {}
        for count, source in sessions.items():
            workspace = root / "pty-resumed"
            shutil.rmtree(workspace, ignore_errors=True)
            shutil.copytree(source, workspace, symlinks=True)
            env = terminal_environment(workspace)
            times[count] = in_terminal([*CAIRN, "--demo", "--resume"], env, [SCREEN_MARK])[0]
        if round_:
            fresh.append(first)
            for count in sessions:
                resumed[count].append(times[count])
    base = statistics.median(fresh)
    return {
        "fresh_first_frame_s": round(base, 3),
        "resume": {
            count: {
                "usable_s": round(statistics.median(values), 3),
                "ratio": round(statistics.median(values) / base, 2),
            }
            for count, values in resumed.items()
        },
    }


async def measure(turns: list[int], runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        sessions = {}
        for count in turns:
            sessions[count] = root / f"session-{count}"
            await asyncio.to_thread(make_session, sessions[count], count)
        process = await asyncio.to_thread(in_terminal_runs, root, sessions, runs)
        fresh: list[dict[str, float]] = []
        resumed: dict[int, list[dict[str, float]]] = {count: [] for count in turns}
        for round_ in range(runs + 1):  # round 0 warms up, untimed
            first = await fresh_once(root)
            results = {count: await resume_once(root, sessions[count]) for count in turns}
            if round_:
                fresh.append(first)
                for count in turns:
                    resumed[count].append(results[count])
    base = statistics.median(r["usable_s"] for r in fresh)
    report: dict[str, Any] = {
        "process": process,
        "fresh_first_frame_s": round(base, 3),
        "target_ratio": TARGET_RATIO,
        "resume": {},
    }
    for count in turns:
        usable = statistics.median(r["usable_s"] for r in resumed[count])
        report["resume"][count] = {
            "usable_s": round(usable, 3),
            "meter_s": round(statistics.median(r["meter_s"] for r in resumed[count]), 3),
            "ratio": round(usable / base, 2),
        }
    return report


def measure_resume(turns: int, runs: int = 5) -> dict[str, float]:
    """Resume of a `turns`-turn session against a fresh first frame, in one run: seconds to
    usable, to the meter, the fresh first frame, and their ratio (medians of `runs`)."""
    report = asyncio.run(measure([turns], runs))
    resumed = report["resume"][turns]
    process = report["process"]
    return {
        "turns": float(turns),
        "process_resume_usable_s": process["resume"][turns]["usable_s"],
        "process_fresh_first_frame_s": process["fresh_first_frame_s"],
        "process_ratio": process["resume"][turns]["ratio"],
        "resume_usable_s": resumed["usable_s"],
        "resume_meter_s": resumed["meter_s"],
        "fresh_first_frame_s": report["fresh_first_frame_s"],
        "ratio": resumed["ratio"],
        "target_ratio": TARGET_RATIO,
    }


def table(report: dict[str, Any]) -> str:
    target = report["target_ratio"]
    process = report["process"]
    lines = [
        "| measure | seconds | in-run baseline | target |",
        "| --- | ---: | ---: | --- |",
        f"| fresh start, first frame (process, 80×24 pty) | {process['fresh_first_frame_s']:.3f}"
        " | | |",
    ]
    for count, row in process["resume"].items():
        met = "met" if row["ratio"] <= target else "NOT met"
        lines.append(
            f"| resume of {count} turns, mark painted (process, 80×24 pty) | {row['usable_s']:.3f}"
            f" | {row['ratio']:.2f}× fresh | ≤ {target:g}×: {met} |"
        )
    base = report["fresh_first_frame_s"]
    lines.append(f"| fresh start, first frame (headless, agent built) | {base:.3f} | | |")
    for count, row in report["resume"].items():
        met = "met" if row["ratio"] <= report["target_ratio"] else "NOT met"
        lines.append(
            f"| resume of {count} turns, usable | {row['usable_s']:.3f} | {row['ratio']:.2f}× fresh"
            f" | ≤ {report['target_ratio']:g}×: {met} |"
        )
        lines.append(f"| resume of {count} turns, meter shows tokens | {row['meter_s']:.3f} | | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--turns", default="50,200", help="session sizes, comma-separated")
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each (medians)")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of a table")
    args = parser.parse_args(argv)
    report = asyncio.run(measure([int(t) for t in args.turns.split(",")], args.runs))
    print(json.dumps(report, indent=2) if args.json else table(report), file=sys.stdout)


if __name__ == "__main__":
    main()

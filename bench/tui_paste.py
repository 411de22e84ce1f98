"""How fast a long bracketed paste lands in the prompt.

    python -m bench.tui_paste [--lines 1000] [--runs 5] [--json]

The real `CairnApp`, headless (`run_test`), on the demo agent of a fresh workspace (as
`bench.tui` builds it). Each run posts an `events.Paste` of `lines` lines to the app, as the
terminal driver does, and times it until the prompt holds it (its `value` is the pasted text),
then until the next frame is painted; then ctrl+o expands the chip in place (the whole text in
the editor) and that is timed to its painted frame as well. A one-line paste, timed the same
way in the same run, is the baseline. Medians of `--runs`; target: the paste held and painted
within 100 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual import events

from shell.build import build_agent
from shell.config import DEMO_MODEL, Settings
from widgets.app import CairnApp

SIZE = (80, 24)
TARGET_S = 0.1
TIMEOUT_S = 30.0


def pasted_text(lines: int) -> str:
    """A log-like paste: numbered lines of varied width, some long enough to wrap."""
    return "\n".join(
        f"2026-12-03 10:{i // 60 % 60:02d}:{i % 60:02d} INFO worker[{i % 7}] step {i} "
        + "x" * (i * 37 % 90)
        for i in range(lines)
    )


async def _until(check: Callable[[], bool]) -> None:
    deadline = time.perf_counter() + TIMEOUT_S
    while not check():
        if time.perf_counter() > deadline:
            raise TimeoutError("the prompt never held the paste")
        await asyncio.sleep(0)


async def _painted(app: CairnApp) -> None:
    """Wait for the next frame (a refresh after everything queued so far)."""
    done = asyncio.Event()
    app.call_after_refresh(done.set)
    await asyncio.wait_for(done.wait(), TIMEOUT_S)


async def _paste_once(app: CairnApp, text: str) -> tuple[float, float]:
    """(held, painted) seconds for one paste into an empty prompt."""
    app.prompt.clear()
    await _painted(app)
    start = time.perf_counter()
    app.post_message(events.Paste(text))
    await _until(lambda: app.prompt.value == text)
    held = time.perf_counter() - start
    await _painted(app)
    return held, time.perf_counter() - start


async def paste_times(lines: int = 1000, runs: int = 5) -> dict[str, float]:
    """Medians, in seconds, of a `lines`-line paste held and painted, its expansion (ctrl+o)
    painted, and a one-line paste painted (the baseline)."""
    text, one = pasted_text(lines), "one line"
    held: list[float] = []
    painted: list[float] = []
    expanded: list[float] = []
    baseline: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "ws").mkdir()
        settings = Settings(workspace=root / "ws", model=DEMO_MODEL, embedder="hash", watch=False)
        app = CairnApp(build_agent(settings), config_dir=root / "config")
        async with app.run_test(size=SIZE) as pilot:
            await _until(lambda: not app.busy)
            await pilot.pause()
            for _ in range(runs):
                baseline.append((await _paste_once(app, one))[1])
                run_held, run_painted = await _paste_once(app, text)
                held.append(run_held)
                painted.append(run_painted)
                start = time.perf_counter()
                app.prompt.action_expand_pastes()
                await _painted(app)
                assert app.prompt.text == text
                expanded.append(time.perf_counter() - start)
            app.prompt.clear()
    return {
        "lines": float(lines),
        "held_s": statistics.median(held),
        "painted_s": statistics.median(painted),
        "expanded_painted_s": statistics.median(expanded),
        "one_line_painted_s": statistics.median(baseline),
        "target_s": TARGET_S,
    }


def measure_paste(lines: int = 1000, runs: int = 5) -> dict[str, float]:
    """`paste_times` from synchronous code (inside an event loop, await `paste_times`)."""
    return asyncio.run(paste_times(lines, runs))


def table(result: dict[str, Any]) -> str:
    lines = int(result["lines"])
    met = "met" if result["painted_s"] <= result["target_s"] else "NOT met"
    baseline = result["one_line_painted_s"]
    ratio = result["painted_s"] / baseline if baseline else float("inf")
    return "\n".join(
        [
            "| measure | median | in-run baseline | target |",
            "| --- | ---: | ---: | --- |",
            f"| paste of 1 line, painted | {baseline * 1000:.1f} ms | | |",
            f"| paste of {lines} lines, held by the prompt | {result['held_s'] * 1000:.1f} ms"
            " | | |",
            f"| paste of {lines} lines, painted (a chip) | {result['painted_s'] * 1000:.1f} ms"
            f" | {ratio:.2f}× one line | ≤ {result['target_s'] * 1000:.0f} ms: {met} |",
            f"| ctrl+o: the {lines} lines expanded in the prompt, painted"
            f" | {result['expanded_painted_s'] * 1000:.1f} ms | | |",
        ]
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1000, help="lines in the paste")
    parser.add_argument("--runs", type=int, default=5, help="pastes timed (the median is shown)")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of a table")
    args = parser.parse_args(argv)
    result = measure_paste(args.lines, args.runs)
    print(json.dumps(result, indent=2) if args.json else table(result))


if __name__ == "__main__":
    main()

"""How fast the TUI keeps up with a streamed answer, and how soon it paints its first frame.

    python -m bench.tui [--rates 250,500,1000,2000] [--tokens N] [--json]

Streaming: the real `CairnApp`, headless (`run_test`), on the demo agent of a fresh workspace
whose `submit` is replaced by a paced stream: a Markdown answer (headings, lists, code blocks),
cut into cl100k tokens, yielded as `TextDelta` events on a wall-clock schedule of `rate` tokens a
second, then the `AssistantMessage` and `TurnFinished` a real turn ends with. They reach the
transcript the way a model's do (worker → `AgentEvent` → bridge → the reply's `Prose`). The
producer runs on the app's own event loop, so a transcript that cannot keep up delays it: the
backlog shows as lateness against the schedule. A rate **keeps up** when the whole answer is in
the reply at most `MAX_LAG_S` after its last token was due, and the producer was never
more than `MAX_LAG_S` behind. The highest rate that keeps up is the figure; target ≥ 500/s.

First frame, two ways, each against a bare Textual app (one `Static`) measured in the same run,
medians of `--runs`, interleaved: fresh processes in an 80×24 pseudo-terminal until the first
frame is on screen, imports included (as `bench.startup`; what a person waits for; target: Cairn
within 2× the bare app); and in this process, headless, from `run_test` entered to the first
refresh after mount (the apps' own composing and painting, imports excluded).

A working day, from the modules that measure each (and run alone too): resume of a 50- and a
200-turn session against a fresh first frame (`bench.tui_resume`, target ≤ 1.5×), a theme switch
on a 200-turn transcript (`bench.tui_theme`, target ≤ 100 ms), and a 1,000-line paste into the
prompt (`bench.tui_paste`, target ≤ 100 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, cast

from textual.app import App, ComposeResult
from textual.widgets import Static

from bench.startup import (
    BARE_APP,
    CAIRN,
    PYTHON,
    compile_cairn,
    in_terminal,
    terminal_environment,
)
from shell.build import build_agent
from shell.config import DEMO_MODEL, Settings
from shell.events import AssistantMessage, BaseEvent, TextDelta, TurnFinished, TurnStarted
from shell.text.tokens import CONTEXT_ENCODING, count_tokens
from widgets.app import CairnApp
from widgets.cards.reply import AssistantReply

MAX_LAG_S = 0.5
"""How far behind its schedule the rendered answer may fall and still keep up."""
TARGET_RATE = 500
TARGET_FIRST_FRAME_RATIO = 2.0
SIZE = (120, 40)
PROMPT = "bench: stream an answer"
RESUME_TURNS = (50, 200)
THEME_TURNS = 200
PASTE_LINES = 1000

ANSWER = """\
## Step {n}: deploying the billing service

The deploy window is **Friday 14:00**; before it, check these:

- the build server `ci-7.internal` is green
- the migration owner (Priya) has signed off
  - with the rollback plan attached
  - and the on-call rota updated
- nothing is pending in `memory/2026-11-30.md`

1. Tag the release.
2. Run the migration in a dry run first.
3. Watch the error rate for ten minutes.

```python
def deploy(service: str, *, dry_run: bool = True) -> int:
    steps = plan(service)
    for step in steps:
        if dry_run:
            print(f"would run {{step.name}}")
            continue
        step.run()
    return len(steps)
```

> If the error rate doubles, roll back at once and write down why.

"""


def answer_tokens(total: int) -> list[str]:
    """The answer, repeated to `total` cl100k tokens, as one string per token."""
    count_tokens("warm", CONTEXT_ENCODING)  # points tiktoken at litellm's offline BPE files
    import tiktoken

    encoding = tiktoken.get_encoding(CONTEXT_ENCODING)
    pieces: list[str] = []
    n = 1
    while len(pieces) < total:
        pieces += [encoding.decode([t]) for t in encoding.encode(ANSWER.format(n=n))]
        n += 1
    return pieces[:total]


def bench_settings(workspace: Path) -> Settings:
    return Settings(workspace=workspace, model=DEMO_MODEL, embedder="hash", watch=False)


class PacedAgent:
    """The demo agent, except that `submit` streams `pieces` at `rate` tokens a second and
    records when each was due and when it was yielded."""

    def __init__(self, agent: Any, pieces: list[str], rate: float) -> None:
        self._agent = agent
        self.pieces = pieces
        self.rate = rate
        self.started = 0.0
        self.worst_late_s = 0.0
        self.last_due = 0.0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._agent, name)

    def submit(self, text: str) -> AsyncIterator[BaseEvent]:
        return self._stream(text)

    async def _stream(self, text: str) -> AsyncIterator[BaseEvent]:
        yield TurnStarted(session_id=self._agent.session_id, turn=1, prompt=text)
        self.started = time.perf_counter()
        for i, piece in enumerate(self.pieces):
            due = self.started + i / self.rate
            if (wait := due - time.perf_counter()) > 0:
                await asyncio.sleep(wait)
            self.worst_late_s = max(self.worst_late_s, time.perf_counter() - due)
            yield TextDelta(text=piece)
        self.last_due = self.started + (len(self.pieces) - 1) / self.rate
        yield AssistantMessage(text="".join(self.pieces))
        yield TurnFinished(reason="completed")


@dataclass
class StreamRun:
    rate: int
    tokens: int
    seconds: float
    """From the first token to the whole answer in the reply."""
    lag_s: float
    """How long after its last token was due the whole answer was in the widget."""
    worst_late_s: float
    """The producer's worst lateness against its schedule (the backlog, in seconds)."""
    keeps_up: bool


async def wait_until(check: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.perf_counter() + timeout_s
    while not check():
        if time.perf_counter() > deadline:
            return False
        await asyncio.sleep(0.002)
    return True


async def stream_once(pieces: list[str], rate: int) -> StreamRun:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "ws").mkdir()
        agent = PacedAgent(build_agent(bench_settings(root / "ws")), pieces, rate)
        app = CairnApp(cast(Any, agent), config_dir=root / "config")
        full = "".join(pieces)
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(lambda: not app.busy, 30)
            await pilot.pause()

            def rendered() -> bool:
                replies = app.transcript.query(AssistantReply)
                return bool(replies) and replies.last().source == full and not app.busy

            app.run_events(lambda: agent.submit(PROMPT))
            await wait_until(lambda: agent.last_due > 0, len(pieces) / rate * 20 + 30)
            done = await wait_until(rendered, 60)
            finished = time.perf_counter()
            await pilot.pause()
    lag = finished - agent.last_due if done else float("inf")
    keeps_up = lag <= MAX_LAG_S and agent.worst_late_s <= MAX_LAG_S
    return StreamRun(
        rate=rate,
        tokens=len(pieces),
        seconds=round(finished - agent.started, 3),
        lag_s=round(lag, 3),
        worst_late_s=round(agent.worst_late_s, 3),
        keeps_up=keeps_up,
    )


class Bare(App[None]):
    def compose(self) -> ComposeResult:
        yield Static("bare-app-ready")


async def first_frame(make: Callable[[Callable[[], object]], App[Any]]) -> float:
    """Seconds from `run_test` entered to the first refresh after mount."""
    painted = asyncio.Event()
    start = time.perf_counter()
    at = 0.0

    def mark() -> None:
        nonlocal at
        at = at or time.perf_counter()
        painted.set()

    app = make(mark)
    async with app.run_test(size=SIZE):
        await asyncio.wait_for(painted.wait(), 30)
    return at - start


def make_bare(mark: Callable[[], object]) -> App[Any]:
    app = Bare()
    app.call_later(lambda: app.call_after_refresh(mark))
    return app


def first_frames_in_terminal(runs: int) -> dict[str, float]:
    """As `bench.startup`: fresh processes in an 80×24 pseudo-terminal, imports included."""
    bare: list[float] = []
    cairn: list[float] = []
    compile_cairn()
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder) / "ws"
        env = terminal_environment(workspace)
        subprocess.run([*CAIRN, "init", str(workspace)], env=env, check=True, capture_output=True)
        for _ in range(runs):
            bare.append(in_terminal([PYTHON, "-c", BARE_APP], env, ["bare-app-ready"])[0])
            cairn.append(in_terminal([*CAIRN, "--demo"], env, ["cairn-demo/brain"])[0])
    return {"bare_s": statistics.median(bare), "cairn_s": statistics.median(cairn)}


def cairn_app(agent: Any, config_dir: Path, mark: Callable[[], object]) -> App[Any]:
    return CairnApp(agent, config_dir=config_dir, after_first_frame=mark)


async def first_frames(runs: int) -> dict[str, float]:
    """In this process, headless: the apps' own mount and first paint, imports excluded."""
    bare: list[float] = []
    cairn: list[float] = []
    for _ in range(runs):
        bare.append(await first_frame(make_bare))
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            (root / "ws").mkdir()
            agent = build_agent(bench_settings(root / "ws"))
            make_cairn = functools.partial(cairn_app, agent, root / "config")
            cairn.append(await first_frame(make_cairn))
    return {"bare_s": statistics.median(bare), "cairn_s": statistics.median(cairn)}


async def measure(
    rates: list[int],
    tokens: int,
    runs: int,
    *,
    resume_turns: tuple[int, ...] = RESUME_TURNS,
    theme_turns: int = THEME_TURNS,
    paste_lines: int = PASTE_LINES,
) -> dict[str, Any]:
    pieces = answer_tokens(tokens)
    process = await asyncio.to_thread(first_frames_in_terminal, runs)
    headless = await first_frames(runs)
    streams = [await stream_once(pieces, rate) for rate in rates]
    kept = [s.rate for s in streams if s.keeps_up]
    from bench import tui_paste, tui_resume, tui_theme  # they build on this module's answer

    day = {
        "resume": await tui_resume.measure(list(resume_turns), runs),
        "theme": await tui_theme.measure_async(theme_turns, runs),
        "paste": await tui_paste.paste_times(paste_lines, runs),
    }
    return {
        **day,
        "first_frame": {
            **{k: round(v, 3) for k, v in process.items()},
            "ratio": round(process["cairn_s"] / process["bare_s"], 2),
            "target_ratio": TARGET_FIRST_FRAME_RATIO,
        },
        "first_frame_headless": {
            **{k: round(v, 3) for k, v in headless.items()},
            "ratio": round(headless["cairn_s"] / headless["bare_s"], 2),
        },
        "streaming": [asdict(s) for s in streams],
        "max_rate_kept": max(kept, default=0),
        "target_rate": TARGET_RATE,
        "max_lag_s": MAX_LAG_S,
    }


def table(result: dict[str, Any]) -> str:
    from bench import tui_paste, tui_resume, tui_theme

    return "\n\n".join(
        [
            streaming_table(result),
            "Resume (`bench.tui_resume`):\n" + tui_resume.table(result["resume"]),
            "Theme switch (`bench.tui_theme`):\n" + tui_theme.table(result["theme"]),
            "Paste (`bench.tui_paste`):\n" + tui_paste.table(result["paste"]),
        ]
    )


def streaming_table(result: dict[str, Any]) -> str:
    frame, headless = result["first_frame"], result["first_frame_headless"]
    met = "met" if frame["ratio"] <= frame["target_ratio"] else "NOT met"
    lines = [
        "| measure | value | in-run baseline | target |",
        "| --- | ---: | ---: | --- |",
        f"| bare Textual app, first frame (process, 80×24 pty) | {frame['bare_s']:.3f} s | | |",
        f"| cairn TUI, first frame (process, 80×24 pty) | {frame['cairn_s']:.3f} s"
        f" | {frame['ratio']:.2f}× bare app | ≤ {frame['target_ratio']:g}×: {met} |",
        f"| bare Textual app, first frame (headless, in process) | {headless['bare_s']:.3f} s"
        " | | |",
        f"| cairn TUI, first frame (headless, in process) | {headless['cairn_s']:.3f} s"
        f" | {headless['ratio']:.2f}× bare app | (no target: imports excluded) |",
    ]
    kept = result["max_rate_kept"]
    met = "met" if kept >= result["target_rate"] else "NOT met"
    lines.append(
        f"| highest streamed rate kept up | {kept} tokens/s | | ≥ {result['target_rate']}: {met} |"
    )
    lines += [
        "",
        "| rate (tokens/s) | tokens | seconds | final lag | worst backlog | keeps up |",
        "| ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for s in result["streaming"]:
        lines.append(
            f"| {s['rate']} | {s['tokens']} | {s['seconds']:.2f} | {s['lag_s']:.3f} s"
            f" | {s['worst_late_s']:.3f} s | {'yes' if s['keeps_up'] else 'no'} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", default="250,500,1000,2000", help="tokens a second, rising")
    parser.add_argument("--tokens", type=int, default=1500, help="tokens in the streamed answer")
    parser.add_argument("--runs", type=int, default=3, help="first-frame runs of each app")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of tables")
    args = parser.parse_args(argv)
    rates = [int(rate) for rate in args.rates.split(",")]
    with contextlib.redirect_stderr(sys.stderr):
        result = asyncio.run(measure(rates, args.tokens, args.runs))
    print(json.dumps(result, indent=2) if args.json else table(result))


if __name__ == "__main__":
    main()

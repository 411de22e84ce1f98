"""Cairn against a real OpenAI-compatible server: a scripted chat, and what the memory did.

    python -m bench.real_server --api-base http://127.0.0.1:8088/v1 --model openai/smollm2 \\
        --context-window 2048 [--turns 20] [--json]

A fresh workspace, the production agent (headless, the real index), and `--turns` scripted user
messages: facts to remember, questions about them, small talk and requests for stories (long
answers fill a small window fast). Per turn it prints how it ended, the prompt as we count it,
as calibrated and as the server reported it, and what the memory lifecycle did: flushes and
their outcomes, compactions (by the model, by rule, failed or skipped), dropped turns, retries
and errors. A **silent turn** ends "completed" with no answer text and no error: the failure
this bench exists to catch. The summary gives, for every call of the turns (not the flush's or
the summariser's), our projection of its prompt against the server's count, and the worst ratio
of the calls after the model's first (`shell.context.calibration`). Nothing here runs in
`make test`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shell import events as ev
from shell.build import build_agent
from shell.config import Settings
from shell.context.calibration import Calibration
from shell.workspace import init_workspace

SCRIPT = [
    "Hi! My name is Ada and I live in Tromsø.",
    "Please remember that the Heron design review is on 9 December.",
    "Tell me a short story about a lighthouse keeper.",
    "Our release train leaves every second Tuesday.",
    "What is my name?",
    "Tell me a story about a fox who learns to sail.",
    "The database password rotation happens on the 1st of each month.",
    "When is the Heron design review?",
    "I prefer tea over coffee, and I am learning Rust.",
    "Tell me another story, this time about a clockmaker in Prague.",
    "Where do I live?",
    "The API gateway runs on Envoy.",
    "How often does the release train leave?",
    "Tell me a story about two friends crossing a desert.",
    "What do I drink in the morning?",
    "Our backup bucket is called cairn-backups-eu.",
    "What runs our API gateway?",
    "Tell me a story about a dragon who is afraid of heights.",
    "What is the name of our backup bucket?",
    "Thanks, that is all for today.",
]


@dataclass
class TurnRow:
    turn: int
    prompt: str
    reason: str = ""
    answer_chars: int = 0
    counted: int = 0
    calibrated: int = 0
    reported: int = 0
    flushes: list[str] = field(default_factory=list)
    compactions: list[str] = field(default_factory=list)
    dropped: int = 0
    retries: int = 0
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Why a flush failed or a retry happened."""
    seconds: float = 0.0

    @property
    def silent(self) -> bool:
        return self.reason == "completed" and not self.answer_chars and not self.errors


def record(row: TurnRow, event: ev.BaseEvent) -> None:
    match event:
        case ev.AssistantMessage(text=text):
            row.answer_chars += len(text.strip())
        case ev.UsageUpdated():
            row.counted, row.calibrated = event.counted_prompt_tokens, event.prompt_tokens
            row.reported = event.reported_prompt_tokens or row.reported
        case ev.FlushFinished(outcome=outcome, error=error):
            row.flushes.append(outcome)
            if error:
                row.notes.append(f"flush {outcome}: {error[:100]}")
        case ev.CompactionFinished(fallback=fallback):
            row.compactions.append("by rule" if fallback else "model")
        case ev.CompactionFailed():
            row.compactions.append("failed")
        case ev.CompactionSkipped():
            row.compactions.append("skipped")
        case ev.TurnsDropped(turns=turns):
            row.dropped += turns
        case ev.ModelRetry(reason=reason):
            row.retries += 1
            row.notes.append(f"retry: {reason[:100]}")
        case ev.Error(kind=kind, message=message):
            row.errors.append(f"{kind}: {message[:100]}")
        case ev.TurnFinished(reason=reason):
            row.reason = reason


Calls = list[tuple[int, int]]
"""(our projection, the server's count) of a call's prompt, per call."""


@dataclass
class ObservedCalibration(Calibration):
    """The agent's calibration, noting each call's projection next to the server's count."""

    calls: Calls = field(default_factory=list)

    def learn(self, counted: int, reported: int) -> bool:
        self.calls.append((self.project(counted), reported))
        return super().learn(counted, reported)


async def run(settings: Settings, prompts: list[str]) -> tuple[list[TurnRow], Calls]:
    """The turns, and each call's (projected, reported) prompt tokens."""
    agent = build_agent(settings, index_in_background=False)
    calibration = agent.request_builder.calibration
    observed = ObservedCalibration(calibration.samples, calibration.slope)
    agent.request_builder.calibration = observed
    rows = []
    try:
        async for _ in agent.start():
            pass
        for number, prompt in enumerate(prompts, start=1):
            row = TurnRow(number, prompt)
            started = time.perf_counter()
            async with contextlib.aclosing(agent.submit(prompt)) as stream:
                async for event in stream:
                    record(row, event)
            row.seconds = time.perf_counter() - started
            rows.append(row)
            print(_line(row), file=sys.stderr, flush=True)
    finally:
        await agent.aclose()
    return rows, observed.calls


def _line(row: TurnRow) -> str:
    lifecycle = [
        *(f"flush {f}" for f in row.flushes),
        *(f"compaction {c}" for c in row.compactions),
    ]
    if row.dropped:
        lifecycle.append(f"dropped {row.dropped} turns")
    ending = "SILENT" if row.silent else row.reason
    return (
        f"{row.turn:>3} {ending:<10} {row.answer_chars:>5} {row.counted:>6} {row.calibrated:>6} "
        f"{row.reported:>6} {row.retries:>3} {row.seconds:>6.1f}  "
        f"{', '.join(lifecycle) or '-'}{'  ' + row.errors[0] if row.errors else ''}"
        + "".join(f"\n      {note}" for note in row.notes)
    )


HEADER = "  # ending     chars counted calib. server try      s  memory lifecycle"


def _off_by(projected: int, reported: int) -> float:
    return round(max(projected / reported, reported / projected), 3) if projected else 0.0


def summary(rows: list[TurnRow], calls: Calls) -> dict[str, Any]:
    compactions = [c for row in rows for c in row.compactions]
    flushes = [f for row in rows for f in row.flushes]
    return {
        "turns": len(rows),
        "completed": sum(row.reason == "completed" for row in rows),
        "silent_turns": sum(row.silent for row in rows),
        "errors": sum(bool(row.errors) for row in rows),
        "flushes": {outcome: flushes.count(outcome) for outcome in sorted(set(flushes))},
        "compactions": {kind: compactions.count(kind) for kind in sorted(set(compactions))},
        "turns_dropped": sum(row.dropped for row in rows),
        "retries": sum(row.retries for row in rows),
        "projected_vs_server": calls,
        "first_call_off_by": _off_by(*calls[0]) if calls else None,
        "worst_later_call_off_by": max((_off_by(*call) for call in calls[1:]), default=None),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--api-base", required=True)
    parser.add_argument("--model", default="openai/local")
    parser.add_argument("--context-window", type=int, default=2048)
    parser.add_argument("--turns", type=int, default=len(SCRIPT))
    parser.add_argument("--max-attempts", type=int, default=2)
    parser.add_argument("--json", action="store_true", help="JSON on stdout, table on stderr")
    args = parser.parse_args(argv)
    workspace = Path(tempfile.mkdtemp(prefix="cairn-real-server-")) / "workspace"
    settings = Settings(
        workspace=workspace,
        model=args.model,
        api_base=args.api_base,
        context_window=args.context_window,
        max_attempts=args.max_attempts,
        watch=False,
    )
    init_workspace(settings)
    prompts = (SCRIPT * (args.turns // len(SCRIPT) + 1))[: args.turns]
    print(HEADER, file=sys.stderr)
    rows, calls = asyncio.run(run(settings, prompts))
    report = summary(rows, calls)
    print(json.dumps(report, indent=2), file=sys.stderr if not args.json else sys.stdout)
    print(f"workspace kept at {workspace}", file=sys.stderr)
    return 1 if report["silent_turns"] else 0


if __name__ == "__main__":
    raise SystemExit(main())

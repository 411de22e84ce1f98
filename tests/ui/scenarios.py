"""Scripted events for the states the demo brain cannot reach on cue: a turn that blocks until
released or cancelled, usage near the thresholds, gate decisions before the panes mount. Every
other UI test runs the real core (`demo_app`); these events are checked against the core's
types as they are played (`FakeAgent`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from shell.context.budget import ContextBudget
from shell.events import (
    AssistantMessage,
    FlushGateEvaluated,
    GateCondition,
    TextDelta,
    TurnFinished,
    TurnStarted,
    UsageUpdated,
)
from tests.ui.fakes import SESSION_ID, FakeAgent

QUICK = "a quick one"
QUICK_ANSWER = "Done."
SLOW = "think slowly"
BUDGET = ContextBudget(window=8192)


def usage(tokens: int, *, calibrated: bool = True) -> UsageUpdated:
    return UsageUpdated(
        prompt_tokens=tokens,
        window=BUDGET.window,
        flush_threshold=BUDGET.flush_threshold,
        compaction_threshold=BUDGET.compaction_threshold,
        calibrated=calibrated,
    )


def gate(flush: bool, projected: int) -> FlushGateEvaluated:
    return FlushGateEvaluated(
        flush=flush,
        summary="yes: over the flush threshold" if flush else "no: below the flush threshold",
        conditions=[
            GateCondition("tokens", flush, projected, BUDGET.flush_threshold, "next prompt"),
            GateCondition(
                "not_flushed_this_cycle", True, None, 0, "not yet flushed before compaction #1"
            ),
        ],
        projected_tokens=projected,
        flush_threshold=BUDGET.flush_threshold,
        compaction_threshold=BUDGET.compaction_threshold,
    )


def quick_turn(number: int) -> list[object]:
    return [
        TurnStarted(SESSION_ID, number, QUICK),
        TextDelta(QUICK_ANSWER),
        AssistantMessage(QUICK_ANSWER),
        TurnFinished(number, "completed"),
    ]


def blocking_agent(workspace: Path) -> tuple[FakeAgent, asyncio.Event]:
    """An agent with a quick turn and a slow one that waits for the returned event (or for a
    cancel): for queueing and cancelling, which the demo brain answers too fast to reach."""
    release = asyncio.Event()
    agent = FakeAgent(workspace, start_script=[usage(1234)])
    agent.turns = {
        QUICK: quick_turn(2),
        SLOW: [
            TurnStarted(SESSION_ID, 1, SLOW),
            TextDelta("Let me think"),
            release,
            TextDelta(" — and done."),
            TurnFinished(1, "completed"),
        ],
    }
    return agent, release

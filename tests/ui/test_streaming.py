"""Streaming into the transcript: a burst of deltas is written together (at most every
`STREAM_INTERVAL_S`), and nothing held is lost: a pause shows it, the end of the answer too."""

from __future__ import annotations

import asyncio
from pathlib import Path

from shell.events import AssistantMessage, TextDelta, TurnFinished, TurnStarted
from tests.ui.conftest import settle, until
from tests.ui.fakes import SESSION_ID, FakeAgent
from tests.ui.pilot_helpers import SIZE
from widgets.app import CairnApp
from widgets.cards.reply import AssistantReply
from widgets.transcript import STREAM_INTERVAL_S

WORDS = [f"- item {n}\n" for n in range(200)]


async def test_a_burst_is_shown_whole_while_the_model_pauses_and_at_the_end(
    workspace: Path,
) -> None:
    paused = asyncio.Event()
    agent = FakeAgent(workspace)
    agent.turns["go"] = [
        TurnStarted(SESSION_ID, 1, "go"),
        *[TextDelta(word) for word in WORDS],
        paused,
        TextDelta("\nThe end."),
        AssistantMessage("".join(WORDS) + "\nThe end."),
        TurnFinished(1, "completed"),
    ]
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        app.prompt.value = "go"
        await pilot.press("enter")
        await until(pilot, lambda: bool(app.query(AssistantReply)))
        reply = app.query_one(AssistantReply)
        await pilot.pause(STREAM_INTERVAL_S * 2)
        await until(pilot, lambda: reply.source == "".join(WORDS))  # the model still pauses
        paused.set()
        await settle(app, pilot)
        assert reply.source == "".join(WORDS) + "\nThe end."

"""A trace recorded live plays back into the TUI and renders the same transcript."""

from __future__ import annotations

import asyncio
from datetime import date
from pathlib import Path

import pytest

from shell.events import from_json
from tests.ui.conftest import send, settle
from tests.ui.scenarios import ASK, REMEMBER, conversation_agent
from widgets.app import CairnApp, replay_app
from widgets.blocks import UserMessage
from widgets.replay import ReplayAgent, load_trace, split_turns

SIZE = (120, 40)


async def record_live(workspace: Path, trace: Path) -> tuple[str, int]:
    agent = conversation_agent(workspace)
    app = CairnApp(agent, trace=trace)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, ASK)
        await send(app, pilot, REMEMBER)
        played = len(agent.start_script) + sum(
            1 for step in [*agent.turns[ASK], *agent.turns[REMEMBER]] if not callable(step)
        )
        return app.transcript.describe(), played


async def test_trace_has_every_event_and_replay_renders_the_same(workspace: Path) -> None:
    trace = workspace / ".cairn" / "traces" / "t.jsonl"
    live, played = await record_live(workspace, trace)

    lines = trace.read_text(encoding="utf-8").splitlines()
    assert len(lines) == played
    events = load_trace(trace)
    assert events == [from_json(line) for line in lines]

    app = replay_app(events, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.transcript.describe() == live
        assert app.status_bar.meter.used == 4500
        assert "Deploys happen on Fridays." in app.query_one("#pane-today").text


async def test_stepped_replay_plays_one_turn_per_enter(workspace: Path) -> None:
    trace = workspace / "t.jsonl"
    await record_live(workspace, trace)
    events = load_trace(trace)
    assert [len(s) > 0 for s in split_turns(events)] == [True, True, True]

    app = CairnApp(ReplayAgent(events, workspace, stepped=True))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert not app.query(UserMessage)
        await pilot.press("enter")
        await settle(app, pilot)
        assert [u.text for u in app.query(UserMessage)] == [ASK]
        await pilot.press("enter")
        await settle(app, pilot)
        assert [u.text for u in app.query(UserMessage)] == [ASK, REMEMBER]


def test_replay_agent_takes_session_budget_and_day_from_the_trace(workspace: Path) -> None:
    trace = workspace / "t.jsonl"
    asyncio.run(record_live(workspace, trace))
    agent = ReplayAgent(load_trace(trace), workspace)
    assert agent.session_id == "s-0001"
    assert agent.settings.demo and agent.settings.model == "cairn-demo/brain"
    assert agent.settings.today() == "2026-05-01"
    assert (agent.budget.window, agent.budget.flush_threshold) == (8192, 5376)


def test_a_bad_trace_line_names_its_line(tmp_path: Path) -> None:
    trace = tmp_path / "bad.jsonl"
    trace.write_text('{"type": "notice", "message": "hi"}\n\n{"type": "nope"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.jsonl:3"):
        load_trace(trace)


def test_a_trace_without_a_daily_note_takes_the_injected_day(tmp_path: Path) -> None:
    agent = ReplayAgent([], tmp_path, today=lambda: date(2030, 1, 2))
    assert agent.settings.day == "2030-01-02"

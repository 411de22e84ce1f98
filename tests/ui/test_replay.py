"""A trace recorded live plays back into the TUI and renders the same transcript."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from shell.events import ApprovalRequested, ToolCallStarted, TurnStarted, from_json
from tests.ui.conftest import MakeApp, send, settle, started
from widgets.app import CairnApp
from widgets.cards.blocks import UserMessage
from widgets.messages import AgentEvent
from widgets.replay import ReplayAgent, load_trace, replay_app, split_turns
from widgets.screens.approval import ApprovalScreen

SIZE = (120, 40)
TOLD = "remember that our deploy window is Friday 14:00"
ASKED = "when is our deploy window?"


async def record_live(demo_app: MakeApp, trace: Path) -> tuple[str, int, list[object]]:
    """A real session with the demo brain, traced: its transcript, meter and routed events."""
    seen: list[object] = []
    app = demo_app(trace=trace)
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await started(app, pilot)
        await send(app, pilot, TOLD)
        await send(app, pilot, ASKED)
        routed = [m.event for m in seen if isinstance(m, AgentEvent)]
        return app.transcript.describe(), app.status_bar.meter.used, routed


async def test_trace_has_every_event_and_replay_renders_the_same(
    demo_app: MakeApp, workspace: Path
) -> None:
    trace = workspace / ".cairn" / "traces" / "t.jsonl"
    live, used, routed = await record_live(demo_app, trace)

    events = load_trace(trace)
    assert events == [from_json(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    assert events == routed, "every event the TUI routed is in the trace, in order"

    app = replay_app(events, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.transcript.describe() == live
        assert app.status_bar.meter.used == used
        assert "our deploy window is Friday 14:00" in app.query_one("#pane-today").text


async def test_stepped_replay_plays_one_turn_per_enter(demo_app: MakeApp, workspace: Path) -> None:
    trace = workspace / "t.jsonl"
    await record_live(demo_app, trace)
    events = load_trace(trace)
    assert [len(s) > 0 for s in split_turns(events)] == [True, True, True]

    app = CairnApp(ReplayAgent(events, workspace, stepped=True))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert not app.query(UserMessage)
        await pilot.press("enter")
        await settle(app, pilot)
        assert [u.text for u in app.query(UserMessage)] == [TOLD]
        await pilot.press("enter")
        await settle(app, pilot)
        assert [u.text for u in app.query(UserMessage)] == [TOLD, ASKED]


async def test_replay_agent_takes_session_budget_and_day_from_the_trace(
    demo_app: MakeApp, workspace: Path
) -> None:
    trace = workspace / "t.jsonl"
    await record_live(demo_app, trace)
    agent = ReplayAgent(load_trace(trace), workspace)
    assert agent.session_id == "20261130-093000-000001"
    assert agent.settings.demo and agent.settings.model == "cairn-demo/brain"
    assert agent.settings.today() == "2026-11-30"
    assert (agent.budget.window, agent.budget.flush_threshold) == (4096, 2688)


def test_a_bad_trace_line_names_its_line(tmp_path: Path) -> None:
    trace = tmp_path / "bad.jsonl"
    trace.write_text('{"type": "notice", "message": "hi"}\n\n{"type": "nope"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.jsonl:3"):
        load_trace(trace)


def test_a_trace_without_a_daily_note_takes_the_injected_day(tmp_path: Path) -> None:
    agent = ReplayAgent([], tmp_path, today=lambda: date(2030, 1, 2))
    assert agent.settings.day == "2030-01-02"


async def test_a_replay_asks_no_one_edits_nothing_and_its_panes_poll(workspace: Path) -> None:
    """What the app asks of `AgentSource.playback`: a trace that stops while a call waits for
    approval opens no modal (nothing would take the answer), F4 edits no memory, and with no
    watcher behind it the side panes poll the files."""
    events = [
        TurnStarted("replay", 1, "run it"),
        ToolCallStarted("c1", "run_command", {"command": "echo hi"}),
        ApprovalRequested("c1", "run_command", "execute", "echo hi", "run_command `echo hi`"),
    ]
    (workspace / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
    app = CairnApp(ReplayAgent(events, workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert "run it" in app.transcript.describe()
        assert not isinstance(app.screen, ApprovalScreen)
        await pilot.press("f4")
        await pilot.pause()
        told = [n.message for n in app._notifications]
        assert told == ["A replay shows a past session: it edits no memory."]
        assert app.side_panes.poll_timer is not None

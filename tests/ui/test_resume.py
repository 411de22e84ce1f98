"""`--resume` rebuilds the view: the earlier turns with their cards, flush blocks and receipts,
the compaction counter and the gate log come back, above a mark, before the live session."""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path

from bench.tui_resume import LONG_PROMPT, make_session
from shell.build import build_agent
from shell.context.budget import configured_budget
from shell.events import (
    CommandOutput,
    FileEdited,
    FlushGateEvaluated,
    ToolCallFinished,
    ToolCallStarted,
    TurnStarted,
)
from shell.session.store import SessionStore
from shell.session.views import ViewLog
from tests.ui.conftest import MakeApp, demo_settings, send, started, until
from tests.ui.pilot_helpers import ASKED, CHAT, SIZE, TOLD, painted
from widgets.app import CairnApp
from widgets.cards.blocks import UserMessage
from widgets.cards.diff_view import DiffView
from widgets.cards.tool_call import ToolCallCard
from widgets.panes.gate_log import GateLog
from widgets.panes.strip import SideStrip
from widgets.resume import EarlierTurns
from widgets.source import AgentPlan, AgentSource


async def test_resume_shows_the_earlier_turns_counters_and_gate_log(demo_app: MakeApp) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        for prompt in (TOLD, ASKED, *CHAT, "/compact"):
            await send(app, pilot, prompt)
        before = app.transcript.describe()
        compactions = app.status_bar.compactions.count
        gates = list(app.side_panes.decisions)
    assert compactions >= 1 and gates

    resumed = demo_app(resume=True)
    async with resumed.run_test(size=SIZE) as pilot:
        await started(resumed, pilot)
        while earlier := resumed.transcript.query(EarlierTurns):  # above the last screenful
            await earlier.first().reveal()
            await pilot.pause()
        view = resumed.transcript.describe()
        assert f"user: {TOLD}" in view and f"user: {ASKED}" in view
        assert "memory_append" in view and "memory_search" in view
        assert "flush:" in view
        assert "— resumed session" in view
        assert view.index(f"user: {ASKED}") < view.index("— resumed session")
        assert resumed.status_bar.compactions.count == compactions
        assert resumed.side_panes.decisions == gates
        assert "no gate decisions yet" not in painted(resumed.side_panes.gate_log)
        await send(resumed, pilot, "where does my sister live?")
        assert resumed.transcript.describe().startswith(view)
    assert before


async def test_cairn_resume_paints_the_past_in_its_first_frame_before_the_agent_is_built(
    demo_app: MakeApp, workspace: Path
) -> None:
    """As `cairn --resume` plans it: the session and its view are read without the core, so the
    first frame already holds the past; the agent built after it does not show it again."""
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await send(app, pilot, TOLD)
    settings = demo_settings(Path(workspace.name))
    sessions = SessionStore(settings.state_dir, settings.clock)
    record = sessions.opened(None, resume=True)
    assert record is not None
    built: list[str] = []

    def build() -> AgentSource:
        built.append(record.session_id)
        return build_agent(settings, session_id=record.session_id, index_in_background=False)

    history = functools.partial(sessions.views.read, record.session_id)
    first_frame: list[tuple[str, bool]] = []
    resumed = CairnApp(
        AgentPlan(settings, configured_budget(settings), build, record.session_id, history),
        after_first_frame=lambda: first_frame.append((resumed.transcript.describe(), bool(built))),
    )
    async with resumed.run_test(size=SIZE) as pilot:
        await started(resumed, pilot)
        [(view, was_built)] = first_frame
        assert f"user: {TOLD}" in view and "— resumed session" in view
        assert not was_built
        assert built == [record.session_id]
        after = resumed.transcript.describe()
        assert after.count(f"user: {TOLD}") == 1 and after.count("— resumed session") == 1


async def test_a_resumed_past_sets_the_strip_and_gate_log_once_and_no_sparkline_points(
    demo_app: MakeApp,
) -> None:
    """At 80 columns the strip shows the past's last write and gate decision (relabelled once,
    not per event); the gate log shows each decision once; the sparkline has no points for
    past turns (their prompt sizes are not in the view log), then one per live turn."""
    app = demo_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        for prompt in (TOLD, ASKED, *CHAT):
            await send(app, pilot, prompt)
        strip = app.query_one(SideStrip)
        write, gate = (
            painted(strip.query_one("#strip-write")),
            painted(strip.query_one("#strip-gate")),
        )
        gates = list(app.side_panes.decisions)
    assert "no writes yet" not in write and gate != "gate: —"

    resumed = demo_app(resume=True)
    async with resumed.run_test(size=(80, 24)) as pilot:
        await started(resumed, pilot)
        strip = resumed.query_one(SideStrip)
        assert painted(strip.query_one("#strip-write")) == write
        assert painted(strip.query_one("#strip-gate")) == gate
        assert resumed.status_bar.lookahead.sizes == []
        await send(resumed, pilot, "how are you today?")
        assert len(resumed.status_bar.lookahead.sizes) == 1
        await pilot.press("f2")  # the panes over the transcript
        await until(pilot, lambda: bool(resumed.query(GateLog)))
        entries = resumed.query_one(GateLog).entries
        numbers = [entry.number for entry in entries]
        assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))
        assert [entry.event for entry in entries] == resumed.side_panes.decisions[-len(entries) :]
        assert resumed.side_panes.decisions[: len(gates)] == gates


def _view_log(workspace: Path) -> tuple[ViewLog, str]:
    log = ViewLog(workspace / ".cairn" / "sessions")
    return log, next(log.folder.glob("*.events.jsonl")).name.split(".", 1)[0]


async def test_a_long_session_comes_back_as_its_last_screenful_and_the_rest_on_demand(
    demo_app: MakeApp, workspace: Path
) -> None:
    """56 turns written by the real core and its view writer (`bench.tui_resume`): the last
    screenful is mounted, the rest waits in one line at the top, which shows more when the
    view is scrolled to it; counters and the gate log hold the whole past."""
    await asyncio.to_thread(make_session, workspace, 56)
    log, session_id = _view_log(workspace)
    past = log.read(session_id)
    decisions = [e for e in past if isinstance(e, FlushGateEvaluated)]
    resumed = demo_app(resume=True)
    async with resumed.run_test(size=SIZE) as pilot:
        await started(resumed, pilot)
        transcript = resumed.transcript
        earlier = transcript.query_one(EarlierTurns)
        assert transcript.blocks[0] is earlier
        assert "earlier turn(s) — scroll up or click to show them" in painted(earlier)
        shown = [b for b in transcript.blocks if isinstance(b, UserMessage)]
        held = [b for b in earlier.held if isinstance(b, UserMessage)]
        assert len(shown) + len(held) == 56 and 0 < len(shown) < 20
        assert f"{len(held)} earlier turn(s)" in painted(earlier)
        assert shown[-1].text == LONG_PROMPT  # the 56th turn: the template's long answer
        assert resumed.focused is resumed.prompt
        view = transcript.describe()
        assert view.index(f"user: {LONG_PROMPT}") < view.index("— resumed session")
        assert resumed.side_panes.decisions == decisions  # the whole past, not the shown part
        assert "… running" not in transcript.describe()

        transcript.scroll_home(animate=False)  # the user scrolls up to the line
        await until(pilot, lambda: len(earlier.held) < len(held) or not earlier.is_attached)
        more = [b for b in transcript.blocks if isinstance(b, UserMessage)]
        assert len(more) > len(shown) and more[-len(shown) :] == shown
        assert transcript.scroll_y > 0, "what was in view stays in view, the new turns above"
        for _ in range(40):  # scrolled up again and again, to the session's first turn
            if not earlier.is_attached:
                break
            transcript.scroll_home(animate=False)
            await pilot.pause(0.05)
        everything = [b for b in transcript.blocks if isinstance(b, UserMessage)]
        assert [b.text for b in everything] == [
            e.prompt for e in past if isinstance(e, TurnStarted)
        ]


async def test_a_call_cairn_was_closed_during_comes_back_interrupted_not_running(
    demo_app: MakeApp, workspace: Path
) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await send(app, pilot, TOLD)
    log, session_id = _view_log(workspace)
    cut = [
        TurnStarted(session_id=session_id, turn=2, prompt="run the tests"),
        ToolCallStarted(call_id="c-edit", name="edit_file", arguments={"path": "a.py"}),
        FileEdited(call_id="c-edit", path="a.py", diff="-old\n+new\n", added=1, removed=1),
        ToolCallFinished(call_id="c-edit", name="edit_file", result="ok"),
        ToolCallStarted(call_id="c-run", name="run_command", arguments={"command": "pytest"}),
        CommandOutput(call_id="c-run", text="collected 3 items\n"),
    ]
    for event in cut:  # the app was quit while pytest ran: no end was written
        log.append(session_id, event)

    resumed = demo_app(resume=True)
    async with resumed.run_test(size=SIZE) as pilot:
        await started(resumed, pilot)
        cards = {card.call_id: card for card in resumed.transcript.query(ToolCallCard)}
        run, edit = cards["c-run"], cards["c-edit"]
        header = painted(run.query_one(".tool-call--header"))
        assert run.interrupted and "interrupted" in header and "running" not in header
        assert "collected 3 items" in run.describe()
        assert not edit.interrupted and edit.query(DiffView), "an edit built before it mounted"
        view = resumed.transcript.describe()
        assert "interrupted when the session was closed: 1 tool call(s)" in view
        assert view.index("interrupted when") < view.index("— resumed session")

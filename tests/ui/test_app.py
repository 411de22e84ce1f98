"""Pilot tests: the TUI driven by a scripted agent, asserting on widgets and posted messages.
The conversation: prompts and streamed answers, the queue, cancelling, failures on screen,
start-up and loading, keys and the narrow layout."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from pathlib import Path

from textual.events import Key
from textual.message import Message
from textual.widgets import Label

from shell.build import build_agent
from shell.context.budget import configured_budget
from shell.events import (
    AssistantMessage,
    Error,
    Loading,
    ModelRetry,
    TextDelta,
    TurnFinished,
    TurnStarted,
)
from shell.heavy_import import collector_paused
from shell.session.store import SessionNotFound
from tests.ui.conftest import MakeApp, demo_settings, send, settle, started, until
from tests.ui.fakes import SESSION_ID, FakeAgent
from tests.ui.pilot_helpers import SIZE, painted
from tests.ui.scenarios import QUICK, QUICK_ANSWER, SLOW, blocking_agent
from widgets.app import CairnApp
from widgets.cards.blocks import NoticeLine, UserMessage
from widgets.cards.reply import AssistantReply
from widgets.messages import AgentEvent
from widgets.source import AgentPlan, AgentSource


def routed(seen: list[Message]) -> list[object]:
    return [m.event for m in seen if isinstance(m, AgentEvent)]


async def test_prompt_shows_user_message_and_streamed_answer(demo_app: MakeApp) -> None:
    seen: list[Message] = []
    app = demo_app()
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await started(app, pilot)
        await send(app, pilot, "hi", typed=True)

        assert app.prompt.value == ""
        users = [u.text for u in app.query(UserMessage)]
        assert users == ["hi"], "the echo and turn_started must show the prompt once"
        (reply,) = app.query(AssistantReply)
        deltas = [e.text for e in routed(seen) if isinstance(e, TextDelta)]
        assert len(deltas) > 1 and "".join(deltas) == reply.source
        assert "offline demo brain" in reply.source
        assert not app.busy


async def test_retry_discards_partial_text(workspace: Path) -> None:
    agent = FakeAgent(workspace)
    agent.turns["hi"] = [
        TurnStarted(SESSION_ID, 1, "hi"),
        TextDelta("half an ans"),
        ModelRetry(1, 4, 1.0, "rate limited", discard_partial=True),
        TextDelta("Hello!"),
        AssistantMessage("Hello!"),
        Error("context_overflow", "context too long, compacting"),
        TurnFinished(1, "completed"),
    ]
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "hi")
        assert [r.source for r in app.query(AssistantReply)] == ["Hello!"]
        notices = {n.text: n for n in app.query(NoticeLine)}
        assert "retrying (1/4) in 1 s: rate limited" in notices
        assert notices["error (context_overflow): context too long, compacting"].has_class("-error")


async def test_a_model_call_that_fails_for_good_voids_its_text_on_screen(workspace: Path) -> None:
    agent = FakeAgent(workspace)
    agent.turns["hi"] = [
        TurnStarted(SESSION_ID, 1, "hi"),
        TextDelta("The fake "),
        Error("unavailable", "the stream ended before the answer did", discard_partial=True),
        TurnFinished(1, "error"),
    ]
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "hi")
        assert list(app.query(AssistantReply)) == []
        notices = [n.text for n in app.query(NoticeLine)]
        assert "error (unavailable): the stream ended before the answer did" in notices


async def test_a_crashing_core_becomes_an_error_line(workspace: Path) -> None:
    agent = FakeAgent(workspace)

    def explode() -> None:
        raise RuntimeError("boom")

    agent.turns["x"] = [explode]
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "x")
        assert "error (crash): RuntimeError: boom" in [n.text for n in app.query(NoticeLine)]
        assert not app.busy


async def test_escape_cancels_a_slow_turn_cleanly(workspace: Path) -> None:
    agent, _ = blocking_agent(workspace)
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.prompt.value = SLOW
        await pilot.press("enter")
        await until(pilot, lambda: bool(app.query(AssistantReply)))
        assert app.busy and app.prompt.has_class("-busy")

        app.prompt.value = QUICK
        await pilot.press("enter")
        assert list(app.queued) == [QUICK]
        await pilot.press("escape")
        await settle(app, pilot)

        assert not app.busy and not app.queued
        assert agent.closed_streams == 2, "start and the slow turn were both closed"
        notices = [n.text for n in app.query(NoticeLine)]
        assert "turn cancelled" in notices and "dropped 1 queued prompt(s)" in notices
        assert f"dropped, not sent: {QUICK}" in notices
        assert not [text for text in notices if text.startswith("queued (")]
        assert "and done" not in app.transcript.describe()

        await send(app, pilot, QUICK)
        assert app.query(AssistantReply).last().source == QUICK_ANSWER


async def test_a_prompt_sent_during_a_turn_runs_after_it(workspace: Path) -> None:
    agent, release = blocking_agent(workspace)
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.prompt.value = SLOW
        await pilot.press("enter")
        await until(pilot, lambda: app.busy)
        app.prompt.value = QUICK
        await pilot.press("enter")
        assert list(app.queued) == [QUICK]
        assert f"queued (1 waiting): {QUICK}" in [n.text for n in app.query(NoticeLine)]
        release.set()
        await until(pilot, lambda: agent.submitted == [SLOW, QUICK])
        await settle(app, pilot)
        assert app.query(AssistantReply).last().source == QUICK_ANSWER
        assert [u.text for u in app.query(UserMessage)] == [SLOW, QUICK]
        assert not [n for n in app.query(NoticeLine) if QUICK in n.text], "it ran: not queued"


async def test_a_prompt_typed_before_the_agent_started_waits_and_is_answered(
    workspace: Path,
) -> None:
    agent, _ = blocking_agent(workspace)
    ready = asyncio.Event()
    agent.start_script = [ready, *agent.start_script]  # a start that takes its time
    app = CairnApp(agent)
    # Keys typed before the app took the terminal are read (and stamped) before the prompt is
    # mounted; their Enter reaches us as "\n", ctrl+j (the tty's cooked mode, ICRNL).
    typed_ahead = [Key(c if c != " " else "space", c) for c in QUICK] + [Key("ctrl+j", "\n")]
    async with app.run_test(size=SIZE) as pilot:
        assert app.busy, "until the agent has started, a prompt waits in the queue"
        for key in typed_ahead:
            app.post_message(key)
        await until(pilot, lambda: bool(app.queued))
        assert list(app.queued) == [QUICK] and agent.submitted == []
        ready.set()
        await until(pilot, lambda: agent.submitted == [QUICK])
        await settle(app, pilot)
        assert app.query(AssistantReply).last().source == QUICK_ANSWER


async def test_a_planned_agent_is_built_after_the_first_frame(workspace: Path) -> None:
    """`cairn` paints before it builds the agent; a prompt typed meanwhile is answered."""
    settings = demo_settings(workspace)
    built: list[str] = []

    def build() -> AgentSource:
        built.append("agent")
        return build_agent(settings, index_in_background=False)

    app = CairnApp(
        AgentPlan(settings, configured_budget(settings), build),
        after_first_frame=lambda: built.append(f"first frame, {app.started=}"),
    )
    async with app.run_test(size=SIZE) as pilot:
        app.prompt.value = "hi"
        await pilot.press("enter")
        await started(app, pilot)
        await until(pilot, lambda: bool(app.query(AssistantReply)))
        await settle(app, pilot)
        assert built == ["first frame, app.started=False", "agent"]
        await until(pilot, lambda: bool(app.side_panes.git_log.commits))  # the agent's history
        assert "000001" in painted(app.query_one("#status-session-short", Label))
        assert "Hello! I'm Cairn" in app.query(AssistantReply).last().source


async def test_a_plan_that_fails_to_build_closes_the_app_with_its_error(
    workspace: Path,
) -> None:
    settings = demo_settings(workspace)

    def build() -> AgentSource:
        raise SessionNotFound("no session 'gone'")

    app = CairnApp(AgentPlan(settings, configured_budget(settings), build))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.build_error is not None)
    assert str(app.build_error) == "no session 'gone'" and app.return_code == 1


async def test_the_status_bar_names_what_is_still_loading(workspace: Path) -> None:
    agent, _ = blocking_agent(workspace)
    loaded = asyncio.Event()
    agent.turns["hi"] = [
        TurnStarted(SESSION_ID, 1, "hi"),
        Loading("model", done=False),
        loaded,
        Loading("model", done=True),
        TurnFinished(1, "completed"),
    ]
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        label = app.query_one("#status-loading", Label)
        assert not label.display or label.has_class("-idle")
        app.prompt.value = "hi"
        await pilot.press("enter")
        await until(pilot, lambda: not label.has_class("-idle"))
        assert "loading model…" in painted(label)
        loaded.set()
        await settle(app, pilot)
        assert label.has_class("-idle")


async def test_the_collector_paused_for_start_up_resumes_once_the_first_frame_is_up(
    workspace: Path,
) -> None:
    startup = contextlib.ExitStack()  # as `cairn` does before it builds the TUI
    startup.enter_context(collector_paused())
    agent, _ = blocking_agent(workspace)
    app = CairnApp(agent, after_first_frame=startup.close)
    try:
        assert not gc.isenabled()
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            assert gc.isenabled()
    finally:
        startup.close()


async def test_keys_clear_toggle_panes_and_cycle_theme(demo_app: MakeApp) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await send(app, pilot, "hi")
        assert app.theme == "cairn"
        await pilot.press("ctrl+t")
        assert app.theme == "cairn-light"
        await pilot.press("ctrl+t", "ctrl+t", "ctrl+t")
        assert app.theme == "cairn"

        side = app.side_panes
        assert side.display
        await pilot.press("f2")
        await pilot.pause()
        assert not side.display
        await pilot.press("f2")
        await pilot.pause()
        assert side.display

        await pilot.press("ctrl+l")
        await pilot.pause()
        assert not app.transcript.blocks
        assert app.focused is app.prompt


async def test_narrow_terminal_hides_the_side_panes_until_f2(demo_app: MakeApp) -> None:
    app = demo_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        assert app.screen.has_class("-narrow")
        assert not app.side_panes.display and app.transcript.display
        await pilot.press("f2")
        await pilot.pause()
        assert app.side_panes.display and app.transcript.display  # over it, not instead
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert not app.screen.has_class("-narrow")

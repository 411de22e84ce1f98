"""Esc during a memory write, on the real core (the demo brain): the write finishes and commits,
its card shows the result, and the cancelled turn's receipt says what happened. The write is
slow for real: its commit waits for the repository's commit lock, held by the test."""

from __future__ import annotations

from pathlib import Path

from shell import events as ev
from shell.git.lock import repo_lock
from tests.git_read import commit
from tests.ui.conftest import MakeApp, send, settle, started, until
from tests.ui.fakes import FakeAgent
from tests.ui.pilot_helpers import DAILY, SIZE
from widgets.app import CairnApp
from widgets.cards.blocks import MemoryWriteLine, NoticeLine
from widgets.cards.reply import AssistantReply
from widgets.cards.tool_call import ToolCallCard

TOLD = "remember that locker 0.2 holds the spare keys"


async def test_escape_during_a_write_shows_the_write_and_a_receipt(demo_app: MakeApp) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        commit_lock = repo_lock(app.agent.settings.workspace.resolve())
        commit_lock.acquire()
        try:
            app.prompt.value = TOLD
            await pilot.press("enter")
            await until(pilot, lambda: bool(app.query(ToolCallCard)))
            await pilot.press("escape")
        finally:
            commit_lock.release()
        await settle(app, pilot)

        card = app.query_one(ToolCallCard)
        assert card.tool_name == "memory_append"
        assert card.finished is not None and card.finished.error is None, "not left running"
        assert card.describe().endswith("ok")
        [line] = app.query(MemoryWriteLine)
        sha = commit(app.agent.settings.workspace).sha
        assert DAILY in line.text and sha[:7] in line.text and not line.has_class("-commit-failed")
        notices = [n.text for n in app.query(NoticeLine)]
        assert (
            f"turn cancelled: the tool under way finished first; done: memory_append; "
            f"written: {DAILY} → {sha[:7]}"
        ) in notices
        assert "turn ended: cancelled" not in notices and not app.busy


async def test_a_call_the_cancel_stopped_says_so_on_its_card(workspace: Path) -> None:
    agent = FakeAgent(workspace)
    agent.turns["x"] = [
        ev.TurnStarted("s", 1, "x"),
        ev.ToolCallStarted("c1", "memory_get", {"path": "MEMORY.md"}),
        ev.ToolCallFinished("c1", "memory_get", '{"text": "# Memory"}'),
        ev.ToolCallStopped("c2", "memory_search", {"query": "keys"}),
        ev.TurnCancelled(1, "tool_calls", ["memory_get"], ["memory_search"]),
        ev.TurnFinished(1, "cancelled"),
    ]
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "x")

        done, stopped = app.query(ToolCallCard)
        assert done.describe().endswith("ok")
        assert stopped.stopped and stopped.describe().endswith("stopped: not run")
        assert "stopped (not run)" in str(stopped._header())
        notices = [n.text for n in app.query(NoticeLine)]
        assert (
            "turn cancelled: the tool under way finished first; done: memory_get; "
            "not run: memory_search"
        ) in notices


async def test_an_answer_the_cancel_cut_stays_dimmed_as_not_kept(workspace: Path) -> None:
    agent = FakeAgent(workspace)
    agent.turns["x"] = [
        ev.TurnStarted("s", 1, "x"),
        ev.TextDelta("Once upon a time a heron"),
        ev.TurnCancelled(1, "model_call"),
        ev.TurnFinished(1, "cancelled"),
    ]
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "x")

        assert "assistant (cut, not kept): Once upon a time a heron" in app.transcript.describe()
        [reply] = app.query(AssistantReply)
        assert reply.has_class("-cut")

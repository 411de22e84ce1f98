"""Project and MCP tool cards, the approval modal and `/tools`, on scripted core events (the
states the real core reaches only through a model: see test_approvals.py for those)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest
from textual.pilot import Pilot

from shell import prompts
from shell.build import build_agent
from shell.config import Settings
from shell.events import (
    ApprovalDecided,
    ApprovalRequested,
    CommandFinished,
    CommandOutput,
    FileEdited,
    McpServerChanged,
    McpServerInfo,
    ToolCallFinished,
    ToolCallStarted,
    ToolInfo,
    ToolsListed,
    TurnFinished,
    TurnStarted,
)
from tests.fakes.openai_script import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.ui.conftest import send, settle, started, until
from tests.ui.fakes import SESSION_ID, FakeAgent
from tests.ui.pilot_helpers import SIZE, painted
from widgets.app import CairnApp
from widgets.cards.blocks import NoticeLine
from widgets.cards.diff_view import DiffView
from widgets.cards.tool_call import ToolCallCard
from widgets.cards.tool_parts import TAIL_LINES
from widgets.cards.tools_block import ToolsBlock
from widgets.prompt import Prompt
from widgets.screens.approval import ApprovalBar, ApprovalScreen


async def open_approval(app: CairnApp, pilot: Pilot[None]) -> None:
    """Wait until the call waits in the bar (nothing opens by itself), then open it with tab."""
    await until(pilot, lambda: bool(app.query_one(ApprovalBar).waiting))
    assert not isinstance(app.screen, ApprovalScreen)
    await pilot.press("tab")
    assert isinstance(app.screen, ApprovalScreen)


def header(card: ToolCallCard) -> str:
    return painted(card.query_one(".tool-call--header"))


COMMAND = "pytest -q"
ASK = ApprovalRequested(
    call_id="c1",
    tool="run_command",
    risk="execute",
    summary=f"run {COMMAND} in the project folder",
    session_scope=f"run_command `{COMMAND}`",
    command=COMMAND,
)
DIFF = "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n-old line\n+new line\n same\n"


def command_turn(gate: asyncio.Event, lines: int = 3) -> list[object]:
    return [
        TurnStarted(SESSION_ID, 1, "test it"),
        ToolCallStarted("c1", "run_command", {"command": COMMAND}),
        ASK,
        gate,
        ApprovalDecided("c1", "run_command", True, "user", "allow_once"),
        *(CommandOutput("c1", f"line {n}\n") for n in range(lines)),
        CommandFinished("c1", COMMAND, 0, "exited", 40, 1234.0),
        ToolCallFinished("c1", "run_command", "exit 0", duration_ms=1234.0),
        TurnFinished(1, "completed"),
    ]


async def test_y_allows_once_and_the_card_streams_a_bounded_tail(workspace: Path) -> None:
    gate = asyncio.Event()
    agent = FakeAgent(workspace, turns={"test it": command_turn(gate, lines=30)})
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        app.prompt.value = "test it"
        await pilot.press("enter")
        await open_approval(app, pilot)
        card = app.query_one(ToolCallCard)
        assert "waiting for approval" in card.describe()
        assert "run_command $ pytest -q" in header(card)
        await pilot.press("y")
        assert agent.answers == [("c1", "allow_once", "")]
        gate.set()
        await settle(app, pilot)
        assert not isinstance(app.screen, ApprovalScreen)
        assert isinstance(app.focused, Prompt)
        text = card.describe()
        assert "approval: allowed once by you" in text
        assert card.command.lines == [f"line {n}" for n in range(30 - TAIL_LINES, 30)]
        assert "exit 0 · 1.2 s · 40 B" in text
        assert "✓ exit 0 · 1.2 s" in header(card)


async def test_n_asks_why_and_sends_the_reason(workspace: Path) -> None:
    gate = asyncio.Event()
    agent = FakeAgent(workspace, turns={"test it": command_turn(gate)})
    app = CairnApp(agent)
    async with app.run_test(size=(80, 24)) as pilot:
        app.prompt.value = "test it"
        await pilot.press("enter")
        await open_approval(app, pilot)
        await pilot.press("n")
        assert agent.answers == []  # the reason first
        await pilot.press(*"not yet", "enter")  # y, n, a typed into the reason stay there
        assert agent.answers == [("c1", "deny", "not yet")]
        assert not isinstance(app.screen, ApprovalScreen)
        gate.set()
        await settle(app, pilot)


async def test_a_decision_made_elsewhere_closes_the_modal(workspace: Path) -> None:
    gate = asyncio.Event()
    turn = [
        TurnStarted(SESSION_ID, 1, "test it"),
        ToolCallStarted("c1", "run_command", {"command": COMMAND}),
        ASK,
        gate,
        ApprovalDecided("c1", "run_command", False, "cancel", "deny", "cancelled"),
        ToolCallFinished("c1", "run_command", "", error="Not run: cancelled.", duration_ms=3.0),
        TurnFinished(1, "cancelled"),
    ]
    agent = FakeAgent(workspace, turns={"test it": turn})
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        app.prompt.value = "test it"
        await pilot.press("enter")
        await open_approval(app, pilot)
        gate.set()
        await settle(app, pilot)
        assert not isinstance(app.screen, ApprovalScreen)
        assert not app.query_one(ApprovalBar).waiting
        assert agent.answers == []
        assert isinstance(app.focused, Prompt)
        assert "denied: the turn was cancelled" in app.query_one(ToolCallCard).describe()


async def test_a_resumed_session_shows_its_approvals_decided_without_a_modal(
    workspace: Path,
) -> None:
    agent = FakeAgent(workspace)
    agent.past = [
        TurnStarted(SESSION_ID, 1, "test it"),
        ToolCallStarted("c1", "run_command", {"command": COMMAND}),
        ASK,
        ApprovalDecided("c1", "run_command", False, "user", "deny", "use make test"),
        ToolCallFinished(
            "c1", "run_command", "", error="The user denied run_command", duration_ms=3.0
        ),
        TurnFinished(1, "completed"),
    ]
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert not isinstance(app.screen, ApprovalScreen)
        card = app.query_one(ToolCallCard)
        assert "approval: denied: use make test" in card.describe()
        assert card.has_class("-denied")


async def test_an_edit_card_shows_its_diff_collapsed_until_clicked(workspace: Path) -> None:
    long_diff = DIFF + "".join(f"+added {n}\n" for n in range(20))
    turn = [
        TurnStarted(SESSION_ID, 1, "edit"),
        ToolCallStarted("e1", "edit_file", {"path": "notes.txt", "old": "old", "new": "new"}),
        ApprovalDecided("e1", "edit_file", True, "rule", "allow_once", "allow rule 'edit_file'"),
        FileEdited("e1", "notes.txt", long_diff, added=21, removed=1),
        ToolCallFinished("e1", "edit_file", "edited", duration_ms=5.0),
        TurnFinished(1, "completed"),
    ]
    app = CairnApp(FakeAgent(workspace, turns={"edit": turn}))
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "edit")
        card = app.query_one(ToolCallCard)
        assert "allowed by rule 'edit_file'" in card.describe()
        assert "edit_file notes.txt" in header(card)
        diff = card.query_one(DiffView)
        assert diff.hidden_lines == len(long_diff.splitlines()) - 12
        assert "more lines (click to show)" in painted(diff)
        await pilot.click(diff)
        await pilot.pause()
        assert diff.expanded and diff.hidden_lines == 0
        assert not card.expanded  # the click opened the diff, not the card


async def test_tools_listing_and_mcp_notices(workspace: Path) -> None:
    ready = McpServerInfo("time", "stdio", "ready", ["time__now", "time__convert"])
    failed = McpServerInfo("git", "stdio", "failed", detail="did not start within 20 s")
    listing = ToolsListed(
        tools=[
            ToolInfo("read_file", "project", "read", "free", "Read lines"),
            ToolInfo("run_command", "project", "execute", "ask", "Run a command"),
            ToolInfo("time__now", "mcp:time", "execute", "allowed", "The time"),
        ],
        servers=[ready, failed],
        project="/tmp/project",
    )
    turn = [
        McpServerChanged(ready),
        McpServerChanged(failed),
        ToolCallStarted("m1", "time__now", {"timezone": "UTC"}),
        ToolCallFinished("m1", "time__now", "12:00", duration_ms=2.0),
        listing,
    ]
    app = CairnApp(FakeAgent(workspace, turns={"/tools": turn}))
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "/tools")
        notices = {n.text: n.level for n in app.query(NoticeLine)}
        assert notices["mcp time: 2 tools"] == "info"
        assert (
            notices["mcp git failed: did not start within 20 s; its tools are not offered"]
            == "warning"
        )
        assert "time: now" in header(app.query_one(ToolCallCard))
        block = app.query_one(ToolsBlock).describe()
        assert "run_command  project  execute  asks first" in block
        assert "mcp git (stdio): failed, 0 tools · did not start within 20 s" in block
        assert "time__now" in painted(app.query_one(ToolsBlock))


async def test_an_approval_asked_over_another_screen_rings_and_says_so(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bar is out of sight under the palette: the bell rings, a toast names the call, and
    nothing takes the palette's keys."""
    before, after = asyncio.Event(), asyncio.Event()
    turn = [TurnStarted(SESSION_ID, 1, "test it"), before, *command_turn(after)[1:]]
    agent = FakeAgent(workspace, turns={"test it": turn})
    app = CairnApp(agent)
    bells: list[None] = []
    monkeypatch.setattr(app, "bell", lambda: bells.append(None))
    async with app.run_test(size=SIZE) as pilot:
        app.prompt.value = "test it"
        await pilot.press("enter", "ctrl+p")
        palette = app.screen
        before.set()
        await until(pilot, lambda: bool(app.query_one(ApprovalBar).waiting))
        assert bells == [None]
        assert any("waits for your approval" in n.message for n in app._notifications)
        assert app.screen is palette
        await pilot.press("escape", "tab", "y")
        assert agent.answers == [("c1", "allow_once", "")]
        after.set()
        await settle(app, pilot)


async def test_a_call_the_model_wrote_as_text_is_a_card_marked_from_text_not_prose(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    written = '<tool_call>{"name": "memory_search", "arguments": {"query": "deploy"}}</tool_call>'
    fake_openai.enqueue(Reply(text=written, split=5), Reply(text="Nothing on that yet."))
    app = CairnApp(build_agent(fake_settings, index_in_background=False))
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await send(app, pilot, "when is the deploy?")

        [card] = app.query(ToolCallCard)
        assert card.from_text and "from text" in painted(card.query_one(".tool-call--header"))
        shown = app.transcript.describe()
        assert "<tool_call>" not in shown and "Nothing on that yet." in shown


async def test_a_call_cairn_made_for_the_model_is_a_card_marked_by_cairn(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    fake_openai.enqueue(Reply(text="I will keep you posted."))
    settings = replace(fake_settings, memory_assist="on")
    app = CairnApp(build_agent(settings, index_in_background=False))
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await send(app, pilot, "remember that the deploy is on Friday")

        [card] = app.query(ToolCallCard)
        assert card.by_cairn and card.tool_name == "memory_append"
        assert "by Cairn" in painted(card.query_one(".tool-call--header"))


async def test_what_cairn_kept_or_sourced_for_a_small_model_is_said_on_screen(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    """A flush the model stored nothing in, kept by rule, says so on its block; an answer that
    restates a search hit without citing it gets the hit's citation beside it."""
    settings = replace(fake_settings, memory_assist="on")
    fake_openai.enqueue(
        Reply(text="OK."), Reply(text=prompts.NO_REPLY), Reply(text="It runs on Envoy.")
    )
    app = CairnApp(build_agent(settings, index_in_background=False))
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await send(app, pilot, "The API gateway runs on Envoy, can you note that?")
        await send(app, pilot, "/flush")
        await send(app, pilot, "What does the API gateway run on?")

        shown = app.transcript.describe()
        assert "flush: written 1 line to memory/" in shown
        assert "(by Cairn: the model stored nothing, so what you told is kept)" in shown
        assert "source (matched by Cairn): memory/" in shown
        assert "· - The API gateway runs on Envoy" in shown

"""Approvals, command and edit cards and `/tools` on the real core: litellm against the loopback
fake OpenAI server, the project tools in a tmp project folder, the app under Pilot."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from shell.build import build_agent
from shell.config import Settings, ToolSettings
from tests.fakes.openai_script import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.ui.conftest import Ticks, settle, started
from tests.ui.pilot_helpers import SIZE, painted
from widgets.app import CairnApp
from widgets.cards.diff_view import DiffView
from widgets.cards.tool_call import ToolCallCard
from widgets.cards.tools_block import ToolsBlock
from widgets.keyguard import KeyGuard
from widgets.prompt import Prompt
from widgets.screens.approval import ApprovalBar, ApprovalScreen

ECHO = json.dumps({"command": "echo hi"})
SnapCompare = Callable[..., bool]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def make_app(fake_settings: Settings, project: Path) -> Callable[..., CairnApp]:
    def make(**tools: Any) -> CairnApp:
        settings = replace(
            fake_settings,
            project=project,
            tools=ToolSettings(**tools),
            timer=Ticks(),
            session_token=lambda: "000001",
        )
        return CairnApp(build_agent(settings, index_in_background=False))

    return make


async def until_waiting(app: CairnApp, pilot: Pilot[None]) -> ApprovalBar:
    """Wait (through the model's HTTP round trip) until an approval waits in the bar."""
    bar = app.query_one(ApprovalBar)
    for _ in range(400):
        if bar.waiting:
            await pilot.pause()
            return bar
        await pilot.pause(0.025)
    raise AssertionError("no approval was asked")


async def ask(app: CairnApp, pilot: Pilot[None], prompt: str) -> ApprovalScreen:
    """Send `prompt`, wait for the approval, and open it with tab."""
    await started(app, pilot)
    app.prompt.value = prompt
    await pilot.press("enter")
    await until_waiting(app, pilot)
    assert not isinstance(app.screen, ApprovalScreen)  # it never opens by itself
    await pilot.press("tab")
    assert isinstance(app.screen, ApprovalScreen)
    return app.screen


def tool_results(fake: FakeOpenAI) -> list[str]:
    """The tool results the model was sent in its latest request."""
    messages = fake.requests[-1]["messages"]
    return [str(m["content"]) for m in messages if m["role"] == "tool"]


async def test_allow_once_runs_the_command_into_its_card(
    make_app: Callable[..., CairnApp], fake_openai: FakeOpenAI
) -> None:
    fake_openai.enqueue(Reply(tool_calls=[("c1", "run_command", ECHO)]), Reply(text="done"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        modal = await ask(app, pilot, "say hi")
        assert modal.event.command == "echo hi"
        assert "allow for this session: run_command `echo hi`" in str(
            modal.query_one("#approval-choices").render_line(1).text
        )
        await pilot.press("y")
        await settle(app, pilot)
        assert isinstance(app.focused, Prompt)
        card = app.query_one(ToolCallCard)
        text = card.describe()
        assert "approval: allowed once by you" in text
        assert "output: hi" in text
        assert "exit 0 · " in text
        assert card.command.lines == ["hi"]


async def test_allow_for_the_session_does_not_ask_again(
    make_app: Callable[..., CairnApp], fake_openai: FakeOpenAI
) -> None:
    fake_openai.enqueue(
        Reply(tool_calls=[("c1", "run_command", ECHO)]),
        Reply(tool_calls=[("c2", "run_command", ECHO)]),
        Reply(text="done"),
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ask(app, pilot, "say hi twice")
        await pilot.press("a", "a")
        await settle(app, pilot)
        assert not isinstance(app.screen, ApprovalScreen)
        first, second = app.query(ToolCallCard)
        assert "approval: allowed for this session by you" in first.describe()
        assert "approval: allowed for this session" in second.describe()
        assert second.approval is None  # never asked
        assert second.command.lines == ["hi"]


async def test_deny_with_a_reason_reaches_the_card_and_the_model(
    make_app: Callable[..., CairnApp], fake_openai: FakeOpenAI
) -> None:
    fake_openai.enqueue(Reply(tool_calls=[("c1", "run_command", ECHO)]), Reply(text="ok then"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ask(app, pilot, "say hi")
        await pilot.press("n", *"use make test", "enter")
        await settle(app, pilot)
        card = app.query_one(ToolCallCard)
        assert "approval: denied: use make test" in card.describe()
        assert card.has_class("-denied")
        assert card.command.ending is None  # it never ran
        assert any("use make test" in result for result in tool_results(fake_openai))
        assert isinstance(app.focused, Prompt)


async def test_esc_in_the_modal_denies_without_a_reason(
    make_app: Callable[..., CairnApp], fake_openai: FakeOpenAI
) -> None:
    fake_openai.enqueue(Reply(tool_calls=[("c1", "run_command", ECHO)]), Reply(text="ok"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ask(app, pilot, "say hi")
        await pilot.press("escape")
        await settle(app, pilot)
        assert "approval: denied by you" in app.query_one(ToolCallCard).describe()
        assert any("no reason given" in result for result in tool_results(fake_openai))
        assert isinstance(app.focused, Prompt)


async def test_a_write_shows_its_diff_in_the_modal_and_on_the_card(
    make_app: Callable[..., CairnApp], fake_openai: FakeOpenAI, project: Path
) -> None:
    write = json.dumps({"path": "notes.txt", "content": "hello\nworld\n"})
    fake_openai.enqueue(Reply(tool_calls=[("w1", "write_file", write)]), Reply(text="written"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        modal = await ask(app, pilot, "write notes")
        assert "+hello" in modal.query_one(DiffView).diff
        assert "allow for this session: write_file to `notes.txt`" in str(
            modal.query_one("#approval-choices").render_line(1).text
        )
        await pilot.press("y")
        await settle(app, pilot)
        card = app.query_one(ToolCallCard)
        assert (project / "notes.txt").read_text() == "hello\nworld\n"
        diff = card.query_one(DiffView)
        assert "+hello" in diff.diff and "+world" in diff.diff
        assert "edited notes.txt (created) +2 -0" in card.describe()


class Seconds:
    """A monotonic clock the test moves: the guard's length, never the machine's speed."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def guarded(app: CairnApp) -> Seconds:
    """Give the app the real guard on a clock the test moves."""
    clock = Seconds()
    app.query_one(ApprovalBar).guard = KeyGuard(0.6, clock=clock)
    return clock


async def test_typing_while_an_approval_arrives_stays_in_the_prompt(
    make_app: Callable[..., CairnApp], fake_openai: FakeOpenAI
) -> None:
    """The attack: the user types the next prompt while the turn runs and the approval comes
    mid-word. No key answers it: the command does not run, every key is in the prompt."""
    fake_openai.enqueue(Reply(tool_calls=[("c1", "run_command", ECHO)]), Reply(text="done"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        app.prompt.value = "say hi"
        await pilot.press("enter")
        await pilot.press(*"and al")
        bar = await until_waiting(app, pilot)
        await pilot.press(*"so add tests")
        await pilot.pause()
        assert app.prompt.value == "and also add tests"
        assert isinstance(app.focused, Prompt)
        assert not isinstance(app.screen, ApprovalScreen)
        assert list(bar.waiting) == ["c1"]
        assert "tab to answer" in str(bar.render())
        assert len(fake_openai.requests) == 1  # no tool result went back: nothing ran
        card = app.query_one(ToolCallCard)
        assert card.decision is None and card.command.lines == []
        await pilot.press("tab", "y")  # the deliberate path; the draft waits in the prompt
        await settle(app, pilot)
        assert "output: hi" in card.describe()
        assert app.prompt.value == "and also add tests"
        assert isinstance(app.focused, Prompt)


async def test_a_key_within_the_guard_after_the_modal_opened_does_nothing(
    make_app: Callable[..., CairnApp], fake_openai: FakeOpenAI
) -> None:
    fake_openai.enqueue(Reply(tool_calls=[("c1", "run_command", ECHO)]), Reply(text="done"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        clock = guarded(app)
        await started(app, pilot)
        app.prompt.value = "say hi"
        await pilot.press("enter")
        await until_waiting(app, pilot)
        await pilot.press("tab")
        modal = app.screen
        assert isinstance(modal, ApprovalScreen)
        assert "keys typed now do nothing" in str(modal.query_one("#approval-hint").render())
        clock.now += 0.5
        await pilot.press("y", "a", "a", "n", "escape", "enter")
        assert app.screen is modal and modal.answered is None
        assert len(fake_openai.requests) == 1
        clock.now += 0.2
        await pilot.press("y")
        await settle(app, pilot)
        assert "approval: allowed once by you" in app.query_one(ToolCallCard).describe()


async def test_enter_on_an_empty_prompt_opens_it_once_typing_has_paused(
    make_app: Callable[..., CairnApp], fake_openai: FakeOpenAI
) -> None:
    fake_openai.enqueue(Reply(tool_calls=[("c1", "run_command", ECHO)]), Reply(text="done"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        clock = guarded(app)
        await started(app, pilot)
        app.prompt.value = "say hi"
        await pilot.press("enter")
        await until_waiting(app, pilot)
        clock.now += 1.0
        await pilot.press("x", "backspace", "enter")  # enter right after typing: not yet
        assert not isinstance(app.screen, ApprovalScreen)
        clock.now += 0.7
        await pilot.press("enter")
        assert isinstance(app.screen, ApprovalScreen)
        clock.now += 0.7
        await pilot.press("n", *"later", "enter")
        await settle(app, pilot)
        assert "approval: denied: later" in app.query_one(ToolCallCard).describe()


async def test_allow_for_the_session_takes_a_second_a_or_enter(
    make_app: Callable[..., CairnApp], fake_openai: FakeOpenAI
) -> None:
    fake_openai.enqueue(Reply(tool_calls=[("c1", "run_command", ECHO)]), Reply(text="done"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        modal = await ask(app, pilot, "say hi")
        await pilot.press("a")
        choices = modal.query_one("#approval-choices")
        assert "a  again to allow for this session" in str(choices.render_line(1).text)
        await pilot.press("down")  # another key: back to the three choices
        assert not modal.confirming and modal.answered is None
        await pilot.press("a", "enter")
        await settle(app, pilot)
        assert "allowed for this session by you" in app.query_one(ToolCallCard).describe()


async def test_tab_moves_the_focus_when_nothing_waits(make_app: Callable[..., CairnApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await pilot.press("tab")
        assert not isinstance(app.screen, ApprovalScreen)
        assert not isinstance(app.focused, Prompt)


async def test_tools_lists_the_project_tools_and_their_approvals(
    make_app: Callable[..., CairnApp],
) -> None:
    app = make_app(allow=("grep",))
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        app.prompt.value = "/tools"
        await pilot.press("enter")
        await settle(app, pilot)
        listing = app.query_one(ToolsBlock).describe()
        assert "run_command  project  execute  asks first" in listing
        assert "read_file  project  read  runs freely" in listing
        assert "memory_search  memory" in listing
        assert "commands: bubblewrap, network off" in listing
        assert "commands bubblewrap, network off" in painted(app.query_one(ToolsBlock))


APP_PY = (
    '"""The app."""\n\nimport sys\n\n\ndef main() -> None:\n    args = sys.argv[1:]\n'
    "    setup(args)\n    check(args)\n"
    + "".join(f"context line {n}\n    old_call({n})\n" for n in range(8))
)
OLD_CALLS = (
    "".join(f"    old_call({n})\ncontext line {n + 1}\n" for n in range(7)) + "    old_call(7)"
)
NEW_CALLS = OLD_CALLS.replace("old_call(", "new_call(").replace(")", ", strict=True)")


def test_the_approval_modal_at_80x24(
    snap_compare: SnapCompare,
    make_app: Callable[..., CairnApp],
    fake_openai: FakeOpenAI,
    project: Path,
) -> None:
    """An edit the model read first, waiting: its diff coloured and scrollable, the three
    choices, the hint."""
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text(APP_PY, encoding="utf-8")
    edit = {"path": "src/app.py", "old": OLD_CALLS, "new": NEW_CALLS}
    fake_openai.enqueue(
        Reply(tool_calls=[("r1", "read_file", json.dumps({"path": "src/app.py"}))]),
        Reply(tool_calls=[("e1", "edit_file", json.dumps(edit))]),
    )
    app = make_app()

    async def run_before(pilot: Pilot[None]) -> None:
        await ask(app, pilot, "fix it")

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_an_approval_waiting_beside_a_draft_at_80x24(
    snap_compare: SnapCompare,
    fake_settings: Settings,
    fake_openai: FakeOpenAI,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The user typed on while the call asked: the bar above the prompt says so, the draft
    keeps the focus."""
    workspace = fake_settings.workspace
    monkeypatch.chdir(workspace.parent)  # the session line names it: the same on every run
    settings = replace(
        fake_settings,
        workspace=Path(workspace.name),
        project=project,
        timer=Ticks(),
        session_token=lambda: "000001",
    )
    fake_openai.enqueue(Reply(tool_calls=[("c1", "run_command", ECHO)]))
    app = CairnApp(build_agent(settings, index_in_background=False))

    async def run_before(pilot: Pilot[None]) -> None:
        await started(app, pilot)
        app.prompt.value = "say hi"
        await pilot.press("enter")
        await until_waiting(app, pilot)
        await pilot.press(*"and also add tests")

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)

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
from tests.ui.pilot_helpers import SIZE
from widgets.app import CairnApp
from widgets.cards.diff_view import DiffView
from widgets.cards.tool_call import ToolCallCard
from widgets.cards.tools_block import ToolsBlock
from widgets.prompt import Prompt
from widgets.screens.approval import ApprovalScreen

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


async def until_asked(app: CairnApp, pilot: Pilot[None]) -> ApprovalScreen:
    """Wait (through the model's HTTP round trip) until the approval modal is up."""
    for _ in range(400):
        if isinstance(app.screen, ApprovalScreen):
            await pilot.pause()
            return app.screen
        await pilot.pause(0.025)
    raise AssertionError("no approval was asked")


async def ask(app: CairnApp, pilot: Pilot[None], prompt: str) -> ApprovalScreen:
    await started(app, pilot)
    app.prompt.value = prompt
    await pilot.press("enter")
    return await until_asked(app, pilot)


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
        await pilot.press("a")
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

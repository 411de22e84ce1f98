"""F4: the memory file in view opened in `$EDITOR` (a script here), the saved edit committed as
the user's, shown in its pane and the transcript, and found by search; a failing editor changes
nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import TabbedContent

from shell.agent import Agent
from shell.memory.files.door import USER_EDIT
from tests.git_read import commit, commits
from tests.ui.conftest import MakeApp, started, until
from tests.ui.pilot_helpers import DAILY, SIZE
from widgets.app import CairnApp
from widgets.cards.blocks import MemoryWriteLine, NoticeLine
from widgets.editor import editor_command

APPEND = "#!/bin/sh\necho '- the staging database moved to pg-9.internal' >> \"$1\"\n"
FAIL = "#!/bin/sh\necho '- never kept' >> \"$1\"\nexit 1\n"


def script(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    path.chmod(0o755)
    return path


def noticed(app: CairnApp, text: str) -> bool:
    return any(text in line.text for line in app.query(NoticeLine))


def head_subject(workspace: Path) -> str:
    return commit(workspace).summary


def test_the_editor_is_editor_then_visual_then_a_default() -> None:
    assert editor_command({"EDITOR": "code -w", "VISUAL": "vim"}) == ["code", "-w"]
    assert editor_command({"EDITOR": " ", "VISUAL": "'my editor' --wait"}) == [
        "my editor",
        "--wait",
    ]
    assert editor_command({})[0] in ("nano", "vi")


async def test_an_edit_in_the_editor_is_committed_shown_and_found(
    demo_app: MakeApp, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EDITOR", str(script(tmp_path, "append.sh", APPEND)))
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        before = head_subject(workspace)
        await pilot.press("f4")
        await until(pilot, lambda: bool(app.query(MemoryWriteLine)) and not app.busy)

        text = (workspace / "MEMORY.md").read_text(encoding="utf-8")
        assert text.endswith("- the staging database moved to pg-9.internal\n")
        assert head_subject(workspace) == f"{USER_EDIT}: MEMORY.md" != before
        line = app.query(MemoryWriteLine).last()
        assert "MEMORY.md" in line.text and "(user)" in line.text
        pane = app.query_one("#pane-memory")
        await until(pilot, lambda: "pg-9.internal" in getattr(pane, "text", ""))

        agent = app.agent
        assert isinstance(agent, Agent)
        result = agent.recall.searcher.search("staging database", max_results=5, min_score=0.0)
        assert any("pg-9.internal" in hit.snippet for hit in result.hits)


async def test_an_unchanged_file_commits_nothing_and_says_so(
    demo_app: MakeApp, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EDITOR", str(script(tmp_path, "noop.sh", "#!/bin/sh\nexit 0\n")))
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        made = len(commits(workspace))
        await pilot.press("f4")
        await until(pilot, lambda: noticed(app, "nothing to commit"))
        assert len(commits(workspace)) == made


async def test_a_failing_editor_changes_nothing(
    demo_app: MakeApp, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        made = len(commits(workspace))
        monkeypatch.setenv("EDITOR", str(script(tmp_path, "fail.sh", FAIL)))
        await pilot.press("f4")
        await until(pilot, lambda: noticed(app, "exited with status 1"))
        monkeypatch.setenv("EDITOR", str(tmp_path / "no-such-editor"))
        await pilot.press("f4")
        await until(pilot, lambda: noticed(app, "could not start"))
        assert len(commits(workspace)) == made
        assert not app.query(MemoryWriteLine)


async def test_the_editor_opens_the_file_of_the_active_tab(
    demo_app: MakeApp, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EDITOR", str(script(tmp_path, "append.sh", APPEND)))
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        app.query_one("#memory-tabs", TabbedContent).active = "tab-today"
        await pilot.pause()
        await pilot.press("f4")
        await until(pilot, lambda: bool(app.query(MemoryWriteLine)) and not app.busy)
        assert "pg-9.internal" in (workspace / DAILY).read_text(encoding="utf-8")
        assert head_subject(workspace) == f"{USER_EDIT}: {DAILY}"

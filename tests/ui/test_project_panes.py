"""The side panes show the memory the session writes: with a project open, its project's
memory (its today's note, MEMORY.md and git log), and a project write is highlighted there;
the global memory's files are not shown as if they were the project's. F5 lists that memory's
commits, and reverts one of them."""

from __future__ import annotations

from pathlib import Path

from shell.scopes.scopes import session_scopes
from tests.ui.conftest import MakeApp, send, started, until
from tests.ui.pilot_helpers import DAILY, SIZE
from widgets.cards.blocks import MemoryWriteLine
from widgets.panes.memory import MemoryFilePane
from widgets.panes.side import SidePanes
from widgets.screens.history import HistoryScreen

FACT = "remember that the staging database is called heron"


async def test_a_project_sessions_panes_show_its_project_memory(
    demo_app: MakeApp, workspace: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "heron"
    folder.mkdir()
    app = demo_app(project=folder)
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        own = session_scopes(app.agent.settings).own
        assert own.kind == "project"
        await send(app, pilot, FACT)

        side = app.query_one(SidePanes)
        today = app.query_one("#pane-today", MemoryFilePane)
        assert side.workspace.resolve() == own.workspace.resolve() and side.scope == own.label
        await until(pilot, lambda: "staging database is called heron" in today.text)
        assert today.written == {"- the staging database is called heron"}
        assert today.path.resolve() == (own.workspace / DAILY).resolve()
        assert not (workspace / DAILY).exists()  # nothing of it in the global memory


async def test_a_project_write_is_in_the_history_f5_opens_and_reverts(
    demo_app: MakeApp, workspace: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "heron"
    folder.mkdir()
    app = demo_app(project=folder)
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await send(app, pilot, FACT)
        card = app.query(MemoryWriteLine).last()
        own = session_scopes(app.agent.settings).own

        await pilot.click(card)  # "show this commit": the project's
        await until(pilot, lambda: isinstance(app.screen, HistoryScreen))
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        await until(pilot, lambda: bool(screen.commits))
        assert screen.current is not None and screen.current.sha == card.commit
        await pilot.press("r")
        await until(pilot, lambda: screen.pending == card.commit)
        await pilot.press("y")
        await until(pilot, lambda: not (own.workspace / DAILY).exists())  # the note it made
        assert screen.commits[0].kind == "revert"


async def test_the_global_memory_md_has_its_own_tab_beside_a_projects(
    demo_app: MakeApp, workspace: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "heron"
    folder.mkdir()
    app = demo_app(project=folder)
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        shown = app.query_one("#pane-global", MemoryFilePane)
        await until(pilot, lambda: "curated long-term memory" in shown.text)
        assert shown.path.resolve() == (workspace / "MEMORY.md").resolve()
        own = app.query_one("#pane-memory", MemoryFilePane)
        assert own.path.resolve() != shown.path.resolve()


async def test_a_session_without_a_project_has_no_global_tab(demo_app: MakeApp) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await until(pilot, lambda: bool(app.query("#pane-memory")))
        assert not app.query("#pane-global")

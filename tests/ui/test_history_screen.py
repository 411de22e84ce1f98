"""Pilot tests of the memory history on the real core: remember → the write card → the commit
and its diff → revert after the confirmation → the file, the pane, the log and search all show
the old text; a revert that no longer applies changes nothing."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import DataTable, Static
from textual.widgets._footer import FooterKey

from shell.events import SearchHit
from shell.git.history import MemoryHistory
from tests.ui.conftest import MakeApp, send, started, until
from tests.ui.pilot_helpers import DAILY, SIZE, TOLD, painted
from widgets.app import CairnApp
from widgets.cards.blocks import MemoryWriteLine
from widgets.cards.tool_call import ToolCallCard
from widgets.panes.memory import MemoryFilePane
from widgets.prompt import Prompt
from widgets.screens.history import HistoryScreen

FACT = "heron"
QUERY = "what is the staging database called?"


def _hits(app: CairnApp) -> list[SearchHit]:
    search = app.query(ToolCallCard).last().search
    assert search is not None
    return search.hits


LATER = "remember that the staging database is called heron"


async def test_remember_history_diff_revert_and_search(demo_app: MakeApp, workspace: Path) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await send(app, pilot, TOLD)
        await send(app, pilot, LATER)
        card = app.query(MemoryWriteLine).last()
        assert card.commit and FACT in (workspace / DAILY).read_text()
        await send(app, pilot, QUERY)
        assert any(FACT in hit.snippet for hit in _hits(app))  # found before the revert

        await pilot.click(card)  # "show this commit"
        await until(pilot, lambda: isinstance(app.screen, HistoryScreen))
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        await until(pilot, lambda: bool(screen.commits))
        assert screen.current is not None and screen.current.sha == card.commit
        assert screen.current.kind == "tool" and screen.current.turn == 2
        diff = painted(screen.query_one("#history-diff-text", Static))
        assert FACT in diff and "Friday 14:00" in diff  # the line added, and its context

        await pilot.press("r")
        await until(pilot, lambda: screen.pending == card.commit)
        assert "Revert" in str(screen.query_one("#history-note", Static).content)
        commits_before = len(screen.commits)
        await pilot.press("y")
        await until(pilot, lambda: len(screen.commits) == commits_before + 1)

        assert FACT not in (workspace / DAILY).read_text()
        assert "Friday 14:00" in (workspace / DAILY).read_text()
        newest = MemoryHistory(workspace).commits()[0]
        assert newest.kind == "revert" and screen.commits[0].sha == newest.sha
        assert "reverted" in str(screen.query_one("#history-note", Static).content)
        today = app.screen_stack[0].query_one("#pane-today", MemoryFilePane)
        assert FACT not in today.text and "Friday 14:00" in today.text

        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, HistoryScreen))
        assert isinstance(app.focused, Prompt)

        await send(app, pilot, QUERY)
        assert all(FACT not in hit.snippet for hit in _hits(app))  # the index re-synced


async def test_history_key_and_command_and_a_refused_revert(
    demo_app: MakeApp, workspace: Path
) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await send(app, pilot, TOLD)
        target = app.query(MemoryWriteLine).last().commit
        (workspace / DAILY).write_text("# changed by hand\n")  # a later edit of the same lines
        await send(app, pilot, "/history")
        assert isinstance(app.screen, HistoryScreen)
        await pilot.press("escape")
        await pilot.pause()

        await pilot.press("f5")
        await until(pilot, lambda: isinstance(app.screen, HistoryScreen))
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        await until(pilot, lambda: bool(screen.commits))
        row = next(i for i, c in enumerate(screen.commits) if c.sha == target)
        screen.query_one(DataTable).move_cursor(row=row)
        await pilot.press("r")
        await pilot.pause()
        before = (workspace / DAILY).read_bytes()
        head = MemoryHistory(workspace).commits()[0].sha
        note = str(screen.query_one("#history-note", Static).content)
        assert screen.pending is None and "cannot revert" in note
        await pilot.press("y")
        await pilot.pause()
        assert (workspace / DAILY).read_bytes() == before
        assert MemoryHistory(workspace).commits()[0].sha == head


async def test_a_revert_is_an_event_of_the_core_in_the_transcript_and_the_trace(
    demo_app: MakeApp, workspace: Path, tmp_path: Path
) -> None:
    """The screen's revert runs `Agent.revert` through the app: its `MemoryWritten` reaches the
    transcript as a write line (through the bridge) and the trace as a `memory_written` line."""
    trace = tmp_path / "trace.jsonl"
    app = demo_app(trace=trace)
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await send(app, pilot, TOLD)
        target = app.query(MemoryWriteLine).last().commit
        await pilot.press("f5")
        await until(pilot, lambda: isinstance(app.screen, HistoryScreen))
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        await until(pilot, lambda: bool(screen.commits))
        assert screen.current is not None and screen.current.sha == target
        await pilot.press("r")
        await until(pilot, lambda: screen.pending == target)
        await pilot.press("y")
        await until(pilot, lambda: "reverted" in str(screen.query_one("#history-note").render()))

        revert = MemoryHistory(workspace).commits()[0]
        assert revert.kind == "revert" and revert.files == [DAILY]
        line = app.screen_stack[0].query(MemoryWriteLine).last()
        assert line.commit == revert.sha and "(revert)" in line.text
    lines = [json.loads(text) for text in trace.read_text().splitlines()]
    written = [line for line in lines if line["type"] == "memory_written"]
    assert (written[-1]["commit"], written[-1]["reason"], written[-1]["path"]) == (
        revert.sha,
        "revert",
        DAILY,
    )


async def test_an_earlier_append_is_reverted_although_later_lines_follow_it(
    demo_app: MakeApp, workspace: Path
) -> None:
    """F5 → r on a write to the daily note that a later write appended after: the preview shows
    the one line that goes, y removes it, and the later line stays."""
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await send(app, pilot, TOLD)
        target = app.query(MemoryWriteLine).last().commit
        await send(app, pilot, LATER)
        assert FACT in (workspace / DAILY).read_text()
        await pilot.press("f5")
        await until(pilot, lambda: isinstance(app.screen, HistoryScreen))
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        await until(pilot, lambda: bool(screen.commits))
        row = next(i for i, c in enumerate(screen.commits) if c.sha == target)
        screen.query_one(DataTable).move_cursor(row=row)
        await pilot.press("r")
        await until(pilot, lambda: screen.pending == target)
        preview = painted(screen.query_one("#history-diff-text", Static))
        removed = [
            line for line in preview.splitlines() if line.startswith("-") and "---" not in line
        ]
        assert len(removed) == 1 and "Friday 14:00" in removed[0]
        await pilot.press("y")
        await until(pilot, lambda: "reverted" in str(screen.query_one("#history-note").render()))

        text = (workspace / DAILY).read_text()
        assert "Friday 14:00" not in text and FACT in text
        assert MemoryHistory(workspace).commits()[0].kind == "revert"


def _footer(screen: HistoryScreen) -> dict[str, str]:
    """What the screen's footer offers: key → description."""
    return {key.key: key.description for key in screen.query(FooterKey)}


async def test_the_footer_offers_y_and_n_while_a_revert_asks(demo_app: MakeApp) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await send(app, pilot, TOLD)
        await pilot.press("f5")
        await until(pilot, lambda: isinstance(app.screen, HistoryScreen))
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        await until(pilot, lambda: bool(screen.commits))
        await until(pilot, lambda: "r" in _footer(screen))
        assert "y" not in _footer(screen) and "n" not in _footer(screen)

        await pilot.press("r")
        await until(pilot, lambda: screen.pending is not None)
        await until(pilot, lambda: "y" in _footer(screen))
        assert _footer(screen)["y"] == "Yes, revert" and _footer(screen)["n"] == "No, keep"
        assert "r" not in _footer(screen), "r does nothing while the screen asks"

        await pilot.press("n")
        await until(pilot, lambda: "r" in _footer(screen))
        assert screen.pending is None and "y" not in _footer(screen)

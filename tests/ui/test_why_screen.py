"""Pilot tests of provenance on the real core: remember → ask → F7 lists the search's hits with
the highlighted line traced to its session and turn; `t` opens that turn read-only, with its
write; `f` moves to MEMORY.md; `/why FILE:LINE` opens the screen on that line, and a bad place is
said without opening it."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

from textual.widgets import DataTable, Static

from tests.ui.conftest import MakeApp, send, started, until
from tests.ui.pilot_helpers import ASKED, DAILY, SIZE, TOLD, painted
from widgets.screens.turn import TurnScreen
from widgets.screens.why import WhyScreen


def _trace(screen: WhyScreen) -> str:
    return str(screen.query_one("#why-trace-text", Static).content)


async def test_f7_traces_a_search_hit_to_its_turn_and_opens_it(
    demo_app: MakeApp, workspace: Path
) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await send(app, pilot, TOLD)
        await send(app, pilot, ASKED)
        session = app.agent.session_id

        await pilot.press("f7")
        await until(pilot, lambda: isinstance(app.screen, WhyScreen))
        screen = app.screen
        assert isinstance(screen, WhyScreen)
        await until(pilot, lambda: screen.traced is not None)
        assert screen.listing.title == "search hits"
        assert screen.current is not None and screen.current.path == DAILY
        assert "Friday 14:00" in screen.current.text
        trace = _trace(screen)
        assert f"session {session} turn 1" in trace
        assert f"asked    {TOLD}" in trace and "memory_append" in trace

        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, TurnScreen))
        turn = str(app.screen.query_one("#turn-text", Static).content)
        assert app.screen.query_one("#turn").border_title == (
            f"session {session} · turn 1 · read-only"
        )
        assert TOLD in turn and f"wrote {DAILY}" in turn and "its writes (1)" in turn
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)

        await pilot.press("f")
        await until(pilot, lambda: screen.listing.title == "MEMORY.md")
        await until(pilot, lambda: "by the workspace's seed" in _trace(screen))
        await pilot.press("escape")


async def test_slash_why_opens_on_a_line_and_a_bad_place_is_said(demo_app: MakeApp) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await send(app, pilot, TOLD)

        await send(app, pilot, "/why ../../etc/passwd:1")
        assert not isinstance(app.screen, WhyScreen)
        await send(app, pilot, f"/why {DAILY}:1")
        await until(pilot, lambda: isinstance(app.screen, WhyScreen))
        screen = app.screen
        assert isinstance(screen, WhyScreen)
        await until(pilot, lambda: screen.traced is not None)
        assert screen.listing.title == DAILY
        assert screen.query_one(DataTable).cursor_row == 0
        assert "turn 1" in _trace(screen)


async def test_x_forgets_the_line_after_asking_and_the_session_forgets_it_too(
    demo_app: MakeApp, workspace: Path
) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await send(app, pilot, TOLD)
        await send(app, pilot, "remember that the staging database is called heron")
        await send(app, pilot, f"/why {DAILY}:1")
        await until(pilot, lambda: isinstance(app.screen, WhyScreen))
        screen = app.screen
        assert isinstance(screen, WhyScreen)
        await until(pilot, lambda: screen.traced is not None)

        await pilot.press("x")
        await until(pilot, lambda: screen.pending is not None)
        assert "Forget memory/2026-11-30.md:1?" in _trace(screen)
        await pilot.press("n")
        await until(pilot, lambda: screen.pending is None)
        assert "Friday 14:00" in (workspace / DAILY).read_text()  # nothing changed

        await pilot.press("x")
        await until(pilot, lambda: screen.pending is not None)
        await pilot.press("y")
        await until(pilot, lambda: "Friday 14:00" not in (workspace / DAILY).read_text())
        await until(pilot, lambda: not app.busy)
        assert "heron" in (workspace / DAILY).read_text()
        assert screen.current is not None and "heron" in screen.current.text
        log = ["git", "log", "-p", "--all"]
        done = await asyncio.to_thread(subprocess.run, log, cwd=workspace, capture_output=True)
        history = done.stdout.decode()
        assert "Friday 14:00" not in history and "heron" in history
        said = json.dumps(app.agent.conversation.messages)
        assert "Friday 14:00" not in said and "[forgotten]" in said
        await pilot.press("escape")

        await send(app, pilot, TOLD)  # said again: its tombstone keeps it out
        assert "Friday 14:00" not in (workspace / DAILY).read_text()


async def test_a_memory_line_that_looks_like_markup_is_shown_as_written(
    demo_app: MakeApp, workspace: Path
) -> None:
    line = "- [b]not bold[/b] and [link=https://x.test]a link[/link] [project:other]"
    memory = workspace / "MEMORY.md"
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        memory.write_text(memory.read_text() + line + "\n")
        number = len(memory.read_text().splitlines())
        await send(app, pilot, f"/why MEMORY.md:{number}")
        await until(pilot, lambda: isinstance(app.screen, WhyScreen))
        screen = app.screen
        assert isinstance(screen, WhyScreen)
        await until(pilot, lambda: screen.traced is not None)
        assert line in painted(screen.query_one(DataTable))  # shown, not read as markup

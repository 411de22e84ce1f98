"""The transcript follows new output unless the user scrolled up (then a mark, and ctrl+end
brings it back); the paging keys work from the prompt; and whatever is typed reaches the prompt,
wherever the focus went (the panes, F2, an overlay)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.app import ComposeResult
from textual.pilot import Pilot
from textual.screen import ModalScreen
from textual.widgets import Collapsible, Static

from shell.events import (
    AssistantMessage,
    CompactionFinished,
    CompactionStarted,
    Notice,
    TurnFinished,
    TurnStarted,
)
from tests.ui.conftest import send, settle, until
from tests.ui.fakes import SESSION_ID, FakeAgent
from tests.ui.pilot_helpers import SIZE
from widgets.app import CairnApp
from widgets.cards.blocks import CompactionReceipt
from widgets.transcript import FollowMark


def chatty(workspace: Path, prompts: tuple[str, ...] = ("one", "two", "three")) -> FakeAgent:
    """Each prompt is a turn of 60 lines: more than a screen."""
    agent = FakeAgent(workspace)
    for number, prompt in enumerate(prompts, start=1):
        lines = [Notice(f"{prompt}: line {i}") for i in range(60)]
        agent.turns[prompt] = [
            TurnStarted(SESSION_ID, number, prompt),
            *lines,
            AssistantMessage(f"{prompt} done"),
            TurnFinished(number, "completed"),
        ]
    return agent


def at_end(app: CairnApp) -> bool:
    transcript = app.transcript
    return transcript.max_scroll_y > 0 and transcript.scroll_y >= transcript.max_scroll_y


async def test_new_output_follows_the_end_unless_scrolled_up(workspace: Path) -> None:
    agent = chatty(workspace)
    halfway = asyncio.Event()
    agent.turns["long"] = [
        TurnStarted(SESSION_ID, 2, "long"),
        *[Notice(f"long: line {i}") for i in range(60)],
        halfway,  # the user reads above meanwhile
        *[Notice(f"long: more {i}") for i in range(20)],
        TurnFinished(2, "completed"),
    ]
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "one")
        transcript, mark = app.transcript, app.query_one(FollowMark)
        assert at_end(app) and transcript.following and not mark.display

        app.prompt.value = "long"
        await pilot.press("enter")
        await until(pilot, lambda: "long: line 59" in transcript.describe())
        await pilot.pause()
        assert at_end(app)
        await pilot.press("pageup")  # from the prompt
        await pilot.pause()
        assert app.focused is app.prompt
        scrolled_to = transcript.scroll_y
        assert scrolled_to < transcript.max_scroll_y and not transcript.following

        halfway.set()
        await settle(app, pilot)
        assert transcript.scroll_y == scrolled_to and not at_end(app)
        assert mark.display

        await pilot.press("ctrl+end")
        await pilot.pause()
        assert at_end(app) and transcript.following and not mark.display
        await send(app, pilot, "two")
        assert at_end(app) and not mark.display


async def test_sending_a_prompt_follows_again(workspace: Path) -> None:
    app = CairnApp(chatty(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "one")
        await pilot.press("pageup")
        await pilot.pause()
        assert not app.transcript.following
        await send(app, pilot, "two")
        assert at_end(app) and not app.query_one(FollowMark).display


async def test_paging_keys_scroll_the_transcript_from_the_prompt(workspace: Path) -> None:
    app = CairnApp(chatty(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "one")
        await send(app, pilot, "two")
        transcript = app.transcript
        await pilot.press("ctrl+home")
        await pilot.pause()
        assert transcript.scroll_y == 0
        await pilot.press("pagedown")
        await pilot.pause()
        assert transcript.scroll_y > 0 and not transcript.following
        while not transcript.following:  # paging down to the end follows again
            await pilot.press("pagedown")
            await pilot.pause()
        assert at_end(app)
        await pilot.press("pageup")
        await pilot.pause()
        assert transcript.scroll_y < transcript.max_scroll_y
        app.prompt.value = "draft"
        await pilot.press("home", "x")  # Home stays the prompt's: the cursor goes to the start
        assert app.prompt.value == "xdraft"


async def test_scrolling_back_to_the_end_follows_again(workspace: Path) -> None:
    app = CairnApp(chatty(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "one")
        transcript = app.transcript
        await pilot.press("pageup")
        await transcript.add_notice("index synced")  # output between turns
        await pilot.pause()
        assert app.query_one(FollowMark).display
        transcript.scroll_end(animate=False)  # as the wheel or the scrollbar would
        await pilot.pause()
        assert transcript.following and not app.query_one(FollowMark).display
        for _ in range(5):
            await transcript.add_notice("index synced")
        await pilot.pause()
        assert at_end(app)


async def test_a_click_on_the_mark_follows_again(workspace: Path) -> None:
    app = CairnApp(chatty(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "one")
        await pilot.press("pageup")
        await app.transcript.add_notice("index synced")
        await pilot.pause()
        assert await pilot.click(FollowMark)
        await pilot.pause()
        assert at_end(app) and app.transcript.following
        assert not app.query_one(FollowMark).display


async def test_opening_a_summary_keeps_following(workspace: Path) -> None:
    agent = chatty(workspace)
    summary = "\n".join(f"- point {i}" for i in range(40))
    agent.turns["/compact"] = [
        CompactionStarted("manual", 3000),
        CompactionFinished("manual", 3000, 1000, 2, 4, 12.0, summary, 1),
    ]
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "one")
        await send(app, pilot, "/compact")
        app.query_one(CompactionReceipt).query_one(Collapsible).collapsed = False
        await pilot.pause(0.3)  # the summary asks to be seen (an animated scroll)
        assert app.transcript.following
        await send(app, pilot, "two")
        assert at_end(app) and not app.query_one(FollowMark).display


async def tab_into_the_panes(app: CairnApp, pilot: Pilot[None]) -> None:
    for _ in range(5):
        await pilot.press("tab")
        if app.focused is not None and app.side_panes in app.focused.ancestors:
            return
    raise AssertionError(f"tab never reached the panes: {app.focused}")


async def test_typing_after_tab_and_f2_reaches_the_prompt(workspace: Path) -> None:
    app = CairnApp(chatty(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await tab_into_the_panes(app, pilot)
        await pilot.press("f2", "f2")
        await pilot.pause()
        await pilot.press(*"hello")
        assert app.prompt.value == "hello" and app.focused is app.prompt


async def test_typing_in_a_pane_goes_to_the_prompt(workspace: Path) -> None:
    app = CairnApp(chatty(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await tab_into_the_panes(app, pilot)
        await pilot.press(*"one", "enter")
        await settle(app, pilot)
        assert app.agent.submitted == ["one"]  # type: ignore[attr-defined]
        assert app.focused is app.prompt


class Overlay(ModalScreen[None]):
    def compose(self) -> ComposeResult:
        yield Static("an overlay")


async def test_focus_comes_back_to_the_prompt_when_an_overlay_closes(workspace: Path) -> None:
    app = CairnApp(chatty(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await tab_into_the_panes(app, pilot)
        await app.push_screen(Overlay())
        await pilot.pause()
        app.pop_screen()
        await pilot.pause()
        assert app.focused is app.prompt
        await pilot.press(*"hello")
        assert app.prompt.value == "hello"

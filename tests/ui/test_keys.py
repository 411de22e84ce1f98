"""The app's keys: a fast burst typed while the focus is elsewhere reaches the prompt whole and
in order, ctrl+c copies / cancels / quits on a second press, and the footer, `/help` and the
keys panel show Cairn's keys."""

from __future__ import annotations

from pathlib import Path

from textual import events
from textual.pilot import Pilot
from textual.widgets import Collapsible
from textual.widgets._collapsible import CollapsibleTitle
from textual.widgets._footer import FooterKey

from shell.events import CompactionFinished, CompactionStarted
from tests.ui.conftest import send, settle, until
from tests.ui.fakes import FakeAgent
from tests.ui.pilot_helpers import SIZE
from tests.ui.scenarios import SLOW, blocking_agent
from widgets.app import CairnApp
from widgets.cards.blocks import CompactionReceipt, NoticeLine


def burst(app: CairnApp, text: str) -> None:
    """Keys as a fast typist sends them: all queued before the app has handled the first."""
    for char in text:
        app.post_message(events.Key("space" if char == " " else char, char))


def submitted(app: CairnApp) -> list[str]:
    return app.agent.submitted  # type: ignore[attr-defined, no-any-return]


async def tab_into_the_panes(app: CairnApp, pilot: Pilot[None]) -> None:
    for _ in range(5):
        await pilot.press("tab")
        if app.focused is not None and app.side_panes in app.focused.ancestors:
            return
    raise AssertionError(f"tab never reached the panes: {app.focused}")


async def test_a_burst_typed_in_the_panes_reaches_the_prompt_whole(workspace: Path) -> None:
    app = CairnApp(FakeAgent(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await tab_into_the_panes(app, pilot)
        burst(app, "what was the locker code")
        await settle(app, pilot)
        assert app.prompt.value == "what was the locker code" and app.focused is app.prompt
        assert submitted(app) == []
        await tab_into_the_panes(app, pilot)
        burst(app, " and the door")
        app.post_message(events.Key("enter", "\r"))  # in the same burst
        await settle(app, pilot)
        assert submitted(app) == ["what was the locker code and the door"]


async def test_a_burst_after_a_click_on_a_summary_reaches_the_prompt_whole(
    workspace: Path,
) -> None:
    agent = FakeAgent(workspace)
    agent.turns["/compact"] = [
        CompactionStarted("manual", 3000),
        CompactionFinished("manual", 3000, 1000, 2, 4, 12.0, "- a point", 1),
    ]
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "/compact")
        title = app.query_one(CompactionReceipt).query_one(CollapsibleTitle)
        assert await pilot.click(title)
        await pilot.pause()
        assert app.focused is title and not title.parent.collapsed  # type: ignore[union-attr]
        burst(app, "tab burst")
        await settle(app, pilot)
        assert app.prompt.value == "tab burst" and submitted(app) == ["/compact"]


async def test_enter_on_a_summary_toggles_it_and_sends_nothing(workspace: Path) -> None:
    agent = FakeAgent(workspace)
    agent.turns["/compact"] = [
        CompactionStarted("manual", 3000),
        CompactionFinished("manual", 3000, 1000, 2, 4, 12.0, "- a point", 1),
    ]
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "/compact")
        app.prompt.value = "half a thou"
        collapsible = app.query_one(CompactionReceipt).query_one(Collapsible)
        collapsible.query_one(CollapsibleTitle).focus()
        await pilot.pause()
        await pilot.press("enter")
        await settle(app, pilot)
        assert not collapsible.collapsed, "Enter was the summary's"
        assert submitted(app) == ["/compact"] and app.prompt.value == "half a thou"
        burst(app, "ght")  # typed on: the keys and then the Enter reach the prompt
        app.post_message(events.Key("enter", "\r"))
        await settle(app, pilot)
        assert submitted(app)[-1] == "half a thought"


async def test_ctrl_c_copies_a_selection_in_the_transcript(workspace: Path) -> None:
    app = CairnApp(FakeAgent(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await app.transcript.add_notice("the locker code is 0.2")
        await pilot.pause()
        notice = app.query(NoticeLine).last()
        notice.text_select_all()
        await pilot.pause()
        assert "Copy" in footer(app)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.clipboard == "the locker code is 0.2" and app.is_running


async def test_ctrl_c_copies_a_selection_in_the_prompt(workspace: Path) -> None:
    app = CairnApp(FakeAgent(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press(*"copy me", "shift+home", "ctrl+c")
        assert app.clipboard == "copy me" and app.is_running


async def test_ctrl_c_cancels_a_running_turn(workspace: Path) -> None:
    agent, _release = blocking_agent(workspace)
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.prompt.value = SLOW
        await pilot.press("enter")
        await until(pilot, lambda: app.busy)
        assert "Cancel" in footer(app)
        await pilot.press("ctrl+c")
        await until(pilot, lambda: not app.busy)
        await settle(app, pilot)
        assert "turn cancelled" in [n.text for n in app.query(NoticeLine)]
        assert app.is_running


async def test_ctrl_c_when_idle_quits_on_the_second_press(workspace: Path) -> None:
    app = CairnApp(FakeAgent(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert "Quit" in footer(app)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running
        assert "ctrl+c again to quit" in [n.message for n in app._notifications]
        assert "Again to quit" in footer(app)
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert app.return_code == 0


async def test_the_armed_quit_lapses(workspace: Path) -> None:
    app = CairnApp(FakeAgent(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+c")
        app._disarm()  # what QUIT_ARM_S later does
        await pilot.pause()
        assert "Again to quit" not in footer(app)
        await pilot.press("ctrl+c")  # arms again, does not quit
        await pilot.pause()
        assert app.is_running


def footer(app: CairnApp) -> list[str]:
    return [
        f"{key.key_display} {key.description}" if key.key_display == "" else key.description
        for key in app.screen.query(FooterKey)
        if key.display
    ]


async def test_the_footer_shows_f4_to_f6_when_there_is_room(workspace: Path) -> None:
    app = CairnApp(FakeAgent(workspace))
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app, pilot)
        assert {"Edit", "History", "Conflicts"} <= set(footer(app))
    app = CairnApp(FakeAgent(workspace))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        shown = footer(app)
        assert "Quit" in shown and not {"Edit", "History", "Conflicts"} & set(shown)


async def test_the_keys_panel_lists_cairns_keys_not_the_editors(workspace: Path) -> None:
    app = CairnApp(FakeAgent(workspace))
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app, pilot)
        app.action_show_help_panel()
        await pilot.pause()
        table = app.screen.query_one("BindingsTable")
        shown = str(table.render_bindings_table().columns[1]._cells)  # type: ignore[attr-defined]
        assert "Send" in shown and "Review" in shown and "History" in shown
        assert "Delete character left" not in shown and "Cursor word left" not in shown

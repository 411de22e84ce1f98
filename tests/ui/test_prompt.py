"""The prompt: several lines, Enter sends and shift+enter / ctrl+j break the line, history on
up/down only from the first / last line, and pastes kept whole (a long one as a chip)."""

from __future__ import annotations

from pathlib import Path

from textual import events

from tests.ui.conftest import settle
from tests.ui.fakes import FakeAgent
from tests.ui.pilot_helpers import SIZE
from widgets.app import CairnApp
from widgets.prompt import FOLD_LINES, MAX_LINES, Prompt


def submitted(app: CairnApp) -> list[str]:
    return app.agent.submitted  # type: ignore[attr-defined, no-any-return]


async def test_shift_enter_and_ctrl_j_break_the_line_and_enter_sends_it_all(
    workspace: Path,
) -> None:
    app = CairnApp(FakeAgent(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press(*"one", "shift+enter", *"two", "ctrl+j", *"three")
        assert app.prompt.value == "one\ntwo\nthree"
        assert app.prompt.outer_size.height == 3 + 2  # three lines inside its border
        await pilot.press("enter")
        await settle(app, pilot)
        assert submitted(app) == ["one\ntwo\nthree"]
        assert app.prompt.value == ""


async def test_a_line_break_in_a_burst_stays_between_the_keys_around_it(
    workspace: Path,
) -> None:
    """tmux sends `alpha C-j beta` in one read: the break must land after alpha, not after
    beta (a binding ran it once the key had bubbled up to the app, behind the next keys)."""
    app = CairnApp(FakeAgent(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        keys = [*"alpha", "ctrl+j", *"beta", "shift+enter", *"gamma"]
        for key in keys:  # posted at once, none waited for
            app.post_message(
                events.Key(key, "\n" if key == "ctrl+j" else key if len(key) == 1 else None)
            )
        await pilot.pause()
        await pilot.pause()
        assert app.prompt.value == "alpha\nbeta\ngamma"


async def test_the_prompt_grows_to_its_cap_then_scrolls(workspace: Path) -> None:
    app = CairnApp(FakeAgent(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.prompt.value = "\n".join(f"line {i}" for i in range(20))
        await pilot.pause()
        assert app.prompt.outer_size.height == MAX_LINES + 2
        assert app.prompt.scroll_y > 0, "the cursor's line (the last) is in view"


async def test_up_and_down_walk_history_only_from_the_first_and_last_line(
    workspace: Path,
) -> None:
    app = CairnApp(FakeAgent(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        for text in ("first", "second"):
            app.prompt.value = text
            await pilot.press("enter")
            await settle(app, pilot)
        await pilot.press(*"a", "shift+enter", *"b")  # a draft of two lines, cursor on "b"
        await pilot.press("up")  # moves within the draft: the cursor goes to line "a"
        assert app.prompt.value == "a\nb" and app.prompt.cursor_location[0] == 0
        await pilot.press("down", "down")  # on the last line already: next is the empty draft
        assert app.prompt.value == ""
        await pilot.press("up")
        assert app.prompt.value == "second"
        await pilot.press("up")
        assert app.prompt.value == "first"
        await pilot.press("down")
        assert app.prompt.value == "second"


async def test_a_short_paste_goes_in_whole(workspace: Path) -> None:
    app = CairnApp(FakeAgent(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press(*"see: ")
        app.post_message(events.Paste("Traceback:\r\n  File x\r\n  Error"))
        await pilot.pause()
        assert app.prompt.value == "see: Traceback:\n  File x\n  Error"
        await pilot.press("enter")
        await settle(app, pilot)
        assert submitted(app) == ["see: Traceback:\n  File x\n  Error"]


async def test_a_long_paste_is_a_chip_that_is_sent_in_full(workspace: Path) -> None:
    pasted = "\n".join(f"log line {i}" for i in range(40))
    app = CairnApp(FakeAgent(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press(*"why? ")
        app.post_message(events.Paste(pasted))
        await pilot.pause()
        assert app.prompt.text == "why? [pasted 40 lines]"
        assert app.prompt.value == "why? " + pasted
        await pilot.press(*" thanks", "enter")
        await settle(app, pilot)
        assert submitted(app) == ["why? " + pasted + " thanks"]
        await pilot.press("up")  # back from history: folded again
        assert app.prompt.text == "[pasted 40 lines]"
        assert app.prompt.value == "why? " + pasted + " thanks"


async def test_ctrl_o_expands_the_chips_in_place(
    workspace: Path,
) -> None:
    one = "\n".join("a" * (FOLD_LINES + 1))
    two = "\n".join("b" * (FOLD_LINES + 1))
    app = CairnApp(FakeAgent(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.post_message(events.Paste(one))
        await pilot.pause()
        await pilot.press("space")
        app.post_message(events.Paste(two))
        await pilot.pause()
        lines = FOLD_LINES + 1
        assert app.prompt.text == f"[pasted {lines} lines] [pasted {lines} lines #2]"
        await pilot.press("ctrl+o")
        assert app.prompt.text == f"{one} {two}" == app.prompt.value


async def test_an_edited_chip_is_plain_text(workspace: Path) -> None:
    app = CairnApp(FakeAgent(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.post_message(events.Paste("\n".join("x" * 30)))
        await pilot.pause()
        await pilot.press("backspace")  # the chip's closing bracket
        assert app.prompt.value == "[pasted 30 lines"


async def test_a_paste_while_the_focus_is_in_a_pane_reaches_the_prompt(workspace: Path) -> None:
    app = CairnApp(FakeAgent(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.side_panes.query("Tab").first().focus()
        await pilot.pause()
        app.post_message(events.Paste("two\nlines"))
        await pilot.pause()
        assert app.focused is app.prompt and app.prompt.value == "two\nlines"


async def test_ctrl_j_after_the_start_breaks_the_line_it_sends_only_when_typed_ahead(
    workspace: Path,
) -> None:
    app = CairnApp(FakeAgent(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press(*"hi", "ctrl+j")
        assert app.prompt.value == "hi\n" and submitted(app) == []


async def test_focus_does_not_select_the_draft(workspace: Path) -> None:
    app = CairnApp(FakeAgent(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.prompt.value = "draft"
        app.side_panes.query("Tab").first().focus()
        await pilot.pause()
        app.prompt.focus()
        await pilot.pause()
        await pilot.press("x")
        assert app.prompt.value == "draftx"
        assert isinstance(app.focused, Prompt)

"""A theme switch costs the screen in view: presses queued behind one apply only the last, and
the transcript's blocks out of view take the new theme when they are scrolled to (timings:
bench/tui_theme.py)."""

from __future__ import annotations

from textual import events
from textual.color import Color
from textual.geometry import Region
from textual.theme import Theme
from textual.widget import Widget

from tests.ui.conftest import MakeApp, send, started, until
from tests.ui.pilot_helpers import SIZE
from widgets.cards.blocks import UserMessage
from widgets.cards.reply import AssistantReply


async def test_presses_queued_behind_one_apply_only_the_last(demo_app: MakeApp) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        applied: list[str] = []

        def switched(theme: Theme) -> None:
            applied.append(theme.name)

        app.theme_changed_signal.subscribe(app, switched)
        for _ in range(3):  # as a terminal sends them: all read before the next frame
            app.post_message(events.Key("ctrl+t", None))
        await until(pilot, lambda: app.theme == "cairn-dusk")
        await pilot.pause()

        assert applied == ["cairn-dusk"], "one switch, to the theme of the last press"
        await pilot.press("ctrl+t")
        await until(pilot, lambda: app.theme == "cairn")  # a single press still switches


async def test_blocks_out_of_view_take_the_new_theme_when_scrolled_to(demo_app: MakeApp) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        transcript = app.transcript
        await transcript.mount_all([UserMessage(f"prompt {n}") for n in range(40)])
        transcript.scroll_end(animate=False)
        await pilot.pause()
        first = transcript.query(UserMessage).first()
        before = first.styles.border_left[1]

        app.action_cycle_theme()
        await until(pilot, lambda: app.theme == "cairn-light")
        await pilot.pause()
        assert first in app.restyler.owed, "out of view: left for later"
        fresh = UserMessage("mounted after the switch")
        await transcript.mount(fresh)
        await pilot.pause()
        assert fresh.styles.border_left[1] != before

        transcript.scroll_home(animate=False)
        await until(pilot, lambda: first not in app.restyler.owed)
        assert first.styles.border_left[1] == fresh.styles.border_left[1]
        assert first.styles.background == fresh.styles.background


def painted_colour(widget: Widget, text: str) -> str:
    """The colour `widget` paints `text` in now (the first segment that holds it)."""
    for strip in widget.render_lines(Region(0, 0, *widget.size)):
        for segment in strip:
            if text in segment.text and segment.style is not None and segment.style.color:
                return segment.style.color.name
    raise AssertionError(f"{text!r} is not painted by {widget}")


async def test_what_is_in_view_is_painted_in_the_new_theme(demo_app: MakeApp) -> None:
    """Blocks that only inherit their colour are drawn in the new one too: a prompt kept the
    dark theme's near-white text on the light theme's background (the app's own colour, which
    every widget inherits, was not restyled)."""
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await send(app, pilot, "remember that the kiln fires on Tuesdays")
        prompt = app.transcript.query(UserMessage).last()
        answer = app.transcript.query(AssistantReply).last()
        before = painted_colour(prompt, "kiln"), painted_colour(answer, "Noted")

        app.theme = "cairn-light"
        await pilot.pause()
        await pilot.pause()

        foreground = Color.parse(app.current_theme.foreground or "").hex.lower()
        assert (painted_colour(prompt, "kiln"), painted_colour(answer, "Noted")) == (
            foreground,
            foreground,
        )
        assert foreground not in before

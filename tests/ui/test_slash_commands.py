"""Slash commands in the TUI on the real core (the demo brain): `/help` lists them with their
keys, an unknown one says so and never reaches the model, and the screen's own commands
(/clear, /exit) go through the same registry."""

from __future__ import annotations

from tests.ui.conftest import MakeApp, send, started
from tests.ui.pilot_helpers import SIZE
from widgets.cards.blocks import NoticeLine, UserMessage


async def test_help_lists_the_commands_with_their_keys(demo_app: MakeApp) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await send(app, pilot, "/help")

        shown = app.query(NoticeLine).last().text
        assert shown.startswith("commands:")
        assert "/compact [focus]" in shown and "(F3)" in shown and "(ctrl+q)" in shown
        keys = shown[shown.index("\nkeys:") :]
        assert "shift+enter, ctrl+j  new line in the prompt" in keys and "f4 " in keys
        assert app.agent.record.turns == 0


async def test_an_unknown_command_is_not_sent_to_the_model(demo_app: MakeApp) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await send(app, pilot, "/flsuh")

        notice = app.query(NoticeLine).last()
        assert notice.text == "error (command): unknown command /flsuh — did you mean /flush?"
        assert app.agent.record.turns == 0 and app.agent.messages == []


async def test_clear_and_quit_are_screen_commands(demo_app: MakeApp) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await send(app, pilot, "hi")
        assert app.query(UserMessage)

        await send(app, pilot, "/clear")
        assert not app.query(UserMessage) and not app.query(NoticeLine)

        await send(app, pilot, "/quit")
    assert app.return_code == 0

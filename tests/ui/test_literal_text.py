"""Tool output, file lines, paths and commands reach the screen as they are; only the model's
prose is Markdown, and even there what a model quotes without backticks stays as written
(`calc/__init__.py`, `<file>`, two lines, `README.md` as a name, not a link)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from textual.strip import Strip

from shell.events import (
    AssistantMessage,
    BaseEvent,
    CommandFinished,
    CommandOutput,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    TurnStarted,
)
from tests.ui.conftest import MakeApp, settle, started
from tests.ui.pilot_helpers import SIZE
from widgets.app import CairnApp
from widgets.cards.reply import AssistantReply
from widgets.cards.tool_call import ToolCallCard

LINES = ["calc/__init__.py", "On branch main <file>", "[red]x[/red] [bold]", "*a* _b_ `c`"]
OUTPUT = "\n".join(LINES)


def screen_lines(app: CairnApp) -> list[str]:
    strips: list[Strip] = app.screen._compositor.render_strips()
    return [strip.text for strip in strips]


def shown(app: CairnApp, line: str) -> bool:
    """Whether `line` is on screen whole, on one row."""
    return any(line in row for row in screen_lines(app))


async def play(app: CairnApp, *events: BaseEvent) -> None:
    async def stream() -> AsyncIterator[BaseEvent]:
        yield TurnStarted(session_id=app.agent.session_id, turn=1, prompt="show me")
        for event in events:
            yield event
        yield TurnFinished(turn=1, reason="completed")

    app.run_events(stream)


async def test_a_tool_result_shows_as_it_is(demo_app: MakeApp) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await play(
            app,
            ToolCallStarted(call_id="c1", name="mcp__read", arguments={"path": "calc/__init__.py"}),
            ToolCallFinished(call_id="c1", name="mcp__read", result=OUTPUT),
        )
        await settle(app, pilot)
        card = app.query(ToolCallCard).last()
        card.expanded = True
        await pilot.pause()

        for line in LINES:
            assert shown(app, line), line
        assert shown(app, 'mcp: read path="calc/__init__.py"')


async def test_a_command_s_output_shows_as_it_is(demo_app: MakeApp) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        command = "git status # [b]"
        await play(
            app,
            ToolCallStarted(call_id="c1", name="run_command", arguments={"command": command}),
            CommandOutput(call_id="c1", text=OUTPUT + "\n"),
            CommandFinished(
                call_id="c1",
                command=command,
                exit_code=0,
                ended="exited",
                output_bytes=len(OUTPUT),
                duration_ms=5,
            ),
            ToolCallFinished(call_id="c1", name="run_command", result="{}"),
        )
        await settle(app, pilot)

        for line in LINES:
            assert shown(app, line), line
        assert shown(app, f"$ {command}")


async def test_prose_is_markdown_that_keeps_what_it_quotes(demo_app: MakeApp) -> None:
    app = demo_app()
    prose = (
        "Look at calc/__init__.py and README.md, `git status` said <file>:\n"
        "a second line, *leaning* and **strong**\n\n"
        "```\n" + OUTPUT + "\n```"
    )
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await play(app, AssistantMessage(text=prose))
        await settle(app, pilot)
        reply = app.query(AssistantReply).last()

        assert shown(app, "Look at calc/__init__.py and README.md, git status said <file>:")
        assert shown(app, "a second line, leaning and strong")  # its own line; Markdown still
        for line in LINES:  # a code block shows its lines as they are
            assert shown(app, line), line
        rows = [line.content for line in reply.lines(reply.size.width)[:2]]
        styles = {row.plain[s.start : s.end]: str(s.style) for row in rows for s in row.spans}
        assert styles["leaning"] == "italic" and styles["strong"] == "bold"
        assert "README.md" not in styles, "a file name is no link"
        assert "__init__" not in styles and "init" not in styles

"""The search card's citation marks under Pilot: the real core with the demo brain, a project
whose Makefile a script changes, and a theme switch that must recolour the marks."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from textual.widgets import Static

from tests.ui.conftest import MakeApp, send, started
from widgets.cards.tool_call import ToolCallCard

MAKEFILE = "setup:\n\tpip install -e .\ntest:\n\tmake test-all\n"


def mark_style(card: ToolCallCard) -> str:
    """The search card's table as ANSI text, from the `source` column's mark on."""
    static = card.query_one(".tool-call--search", Static)
    console = Console(record=True, width=120, color_system="truecolor", force_terminal=True)
    console.print(static.content)
    text = console.export_text(styles=True)
    return text[text.index("gone") - 30 : text.index("gone")]


def truecolour(hex_colour: str) -> str:
    red, green, blue = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"38;2;{red};{green};{blue}m"


async def test_a_gone_citation_is_marked_in_the_theme_s_error_colour_across_a_switch(
    demo_app: MakeApp, workspace: Path
) -> None:
    project = workspace.parent / "project"
    project.mkdir()
    (project / "Makefile").write_text(MAKEFILE)
    app = demo_app(project=project.resolve())
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await send(app, pilot, "remember that tests run with make test-all (Makefile#L3-L4)")
        (project / "Makefile").write_text("all:\n")
        await send(app, pilot, "how do tests run?")
        [card] = [c for c in app.query(ToolCallCard) if c.search is not None]
        assert "  gone: Makefile#L3-L4: Makefile has 1 lines now" in card.describe()
        assert truecolour(app.get_css_variables()["error"]) in mark_style(card)
        app.theme = "cairn-light"
        await pilot.pause()
        await pilot.pause()
        light = app.get_css_variables()["error"]
        assert truecolour(light) in mark_style(card)

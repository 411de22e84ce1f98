"""What the TUI draws holds no terminal escape from memory: a MEMORY.md and a daily note whose
lines carry OSC 52, a title set, SGR 8, a cursor move, the 8-bit CSI and a bidi override reach
the screen (the side pane, the search card, the reply) as their words only. Rich and Textual
drop BEL, BS, VT, FF and CR and let the rest through; `widgets.terminal.PrintableFilter` takes
it."""

from __future__ import annotations

from pathlib import Path

from textual.strip import Strip

from shell.text.printable import unsafe
from tests.ui.conftest import MakeApp, send, started, until
from tests.ui.pilot_helpers import ASKED, SIZE
from widgets.app import CairnApp
from widgets.cards.tool_call import ToolCallCard
from widgets.panes.memory import MemoryFilePane

SEQUENCES = "\x1b]52;c;aGk=\x07\x1b]0;owned\x07\x1b[8m\x1b[2A\x9b2J\u202e"
MEMORY = f"# Memory\n\n- The clipboard{SEQUENCES} codeword is heron\x1b[0m.\n"
NOTE = f"# 2026-11-30\n\n- Our deploy window is Friday{SEQUENCES} 14:00\x1b[0m.\n"


def screen_strips(app: CairnApp) -> list[Strip]:
    return app.screen._compositor.render_strips()


def terminal_output(app: CairnApp) -> str:
    """What the driver would write for a full frame: Textual's own sequences, and the text."""
    return app.screen._compositor.render_full_update().render_segments(app.console)


async def test_memory_escapes_reach_the_screen_as_words(demo_app: MakeApp, workspace: Path) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        (workspace / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
        (workspace / "memory").mkdir(exist_ok=True)
        (workspace / "memory" / "2026-11-30.md").write_text(NOTE, encoding="utf-8")
        pane = app.query_one("#pane-memory", MemoryFilePane)
        await pane.reload(force=True)
        await send(app, pilot, ASKED)
        card = app.query(ToolCallCard).last()
        await until(pilot, lambda: card.search is not None)

        assert "\x1b]52" in pane.text  # the pane holds the file as it is; the screen does not
        strips = screen_strips(app)
        screen = "\n".join(strip.text for strip in strips)
        assert "codeword is heron" in screen
        assert "memory/2026-11-30.md#L3-L3" in screen  # the search card; the reply quotes it
        assert "Our deploy window is Friday52;c;aGk=0;owned2J" in screen  # each end was dropped
        segments = [segment.text for strip in strips for segment in strip]
        assert not [text for text in segments if unsafe(text)]
        output = terminal_output(app)
        for obeyed in ("\x1b]", "\x07", "\x1b[8m", "\x1b[2A", "\x9b", "\u202e"):
            assert obeyed not in output


def test_the_filter_keeps_each_line_s_width_and_its_styles() -> None:
    from rich.cells import cell_len
    from rich.segment import Segment
    from rich.style import Style
    from textual.color import Color

    from widgets.terminal import PRINTABLE

    bold = Style(bold=True)
    clean = [Segment("plain ", None), Segment("bold", bold)]
    dirty = [Segment("a\x1b[8mb", bold), Segment("\x1b"), Segment("c\u202ed", None)]
    assert PRINTABLE.apply(clean, Color(0, 0, 0)) is clean
    filtered = PRINTABLE.apply(dirty, Color(0, 0, 0))
    assert filtered == [Segment("ab   ", bold), Segment("cd", None)]
    assert sum(cell_len(s.text) for s in filtered) == sum(cell_len(s.text) for s in dirty)


def test_a_link_that_would_break_out_of_its_osc_8_is_dropped_and_its_text_kept() -> None:
    from rich.console import Console
    from rich.text import Text
    from textual.color import Color

    from widgets.terminal import PRINTABLE

    # a command's output, as the command card reads it (`Text.from_ansi`)
    output = Text.from_ansi("see \x1b]8;;https://x.example/\x9b2J\u202e\x1b\\here\x1b]8;;\x1b\\")
    segments = list(output.render(Console()))
    assert any(s.style is not None and s.style.link for s in segments)
    filtered = PRINTABLE.apply(segments, Color(0, 0, 0))
    assert "".join(s.text for s in filtered) == "see here"
    assert not [s for s in filtered if s.style is not None and s.style.link]
    safe = Text.from_ansi("\x1b]8;;https://x.example/\x1b\\here\x1b]8;;\x1b\\")
    kept = list(safe.render(Console()))
    assert PRINTABLE.apply(kept, Color(0, 0, 0)) is kept

"""How the app lives in its terminal: a layout that follows the width (on a narrow terminal the
side panes fold into a strip and F2 opens them over the transcript), the keys panel, and
quitting when the terminal hangs up, and printing nothing a terminal would obey."""

from __future__ import annotations

import select
import sys
from collections.abc import Sequence

from rich.cells import cell_len
from rich.segment import Segment
from textual.color import Color
from textual.events import Resize
from textual.filter import LineFilter

from shell.text.printable import printable, unsafe
from widgets.theme_choice import ThemedApp

NARROW_WIDTH = 100
"""Below this many columns the side panes fold into a one-line strip (F2 opens them over the
transcript)."""
COMPACT_WIDTH = 150
"""Below this many columns the status bar shortens the session id."""
TERMINAL_CHECK_S = 2.0
"""How often the TUI checks that its terminal is still there."""


def hung_up(fd: int) -> bool:
    """Whether the terminal behind `fd` has hung up (its other end closed)."""
    poller = select.poll()
    poller.register(fd, 0)  # no events asked for: only hang-up and error are reported
    return any(mask & (select.POLLHUP | select.POLLERR) for _, mask in poller.poll(0))


class PrintableFilter(LineFilter):
    """Every line the app draws, made printable (`shell.text.printable`) at its last step before
    the terminal (and `cairn serve`'s xterm.js): Rich and Textual drop only BEL, BS, VT, FF and
    CR, so a memory file, a tool result or an MCP server's description holding OSC 52 or SGR 8
    would reach the terminal, from any widget. The cells were laid out with the escapes counted
    (ESC as none, the rest of a sequence one each): what is removed becomes blanks at the end of
    its segment, so the line keeps its width. `App.get_line_filters` is Textual's hook for this
    (its NO_COLOR and dim filters use it); Textual is pinned, and `tests/ui/test_escapes.py`
    and `tests/e2e/test_tui_escapes.py` check the terminal's bytes."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        if not unsafe("".join([_drawn(segment) for segment in segments])):
            return segments
        kept = []
        for text, style, control in segments:
            if unsafe(text):
                shown = printable(text, escape=False)
                text = shown + " " * (cell_len(text) - cell_len(shown))
            if style is not None and style.link is not None and unsafe(style.link):
                style = style.update_link(None)  # Textual writes a link into an OSC 8 sequence
            if text or control:
                kept.append(Segment(text, style, control))
        return kept


def _drawn(segment: Segment) -> str:
    """What of a segment reaches the terminal as it is: its text, and its link if any (a
    command's output, through `Text.from_ansi`, may carry an OSC 8 link)."""
    style = segment.style
    return segment.text if style is None or style.link is None else segment.text + style.link


PRINTABLE = PrintableFilter()
"""One filter for the app's life: each strip caches what a filter made of it."""


class TerminalApp(ThemedApp):
    """The terminal side of the Cairn app (see the module); `CairnApp` builds on it."""

    def get_line_filters(self) -> Sequence[LineFilter]:
        return [*super().get_line_filters(), PRINTABLE]

    def on_mount(self) -> None:
        if not self.is_headless and sys.__stdin__ is not None and sys.__stdin__.isatty():
            self.set_interval(TERMINAL_CHECK_S, self._exit_if_terminal_gone)

    def _exit_if_terminal_gone(self) -> None:
        """Quit (saving the session) when the terminal hung up, e.g. an SSH connection dropped.
        Textual's input thread reads end-of-file from a hung-up tty in a loop and never exits:
        under `make run` that left cairn at 100% CPU after the terminal closed."""
        if sys.__stdin__ is not None and hung_up(sys.__stdin__.fileno()):
            self.exit()

    def action_show_help_panel(self) -> None:
        """The keys panel opens over the side area (in #main, see app.tcss), not beside it."""
        if not self.help_panel_open:
            from textual.widgets import HelpPanel  # 20 ms of imports: loaded when first opened

            self.screen.query_one("#main").mount(HelpPanel())

    @property
    def help_panel_open(self) -> bool:
        """Whether the keys panel is open (a child of #main: no walk of the transcript)."""
        main = self.screen.query_one_optional("#main")
        return main is not None and any(type(c).__name__ == "HelpPanel" for c in main.children)

    @property
    def side_overlay_open(self) -> bool:
        """Whether the panes are open over the transcript (narrow terminals, after F2)."""
        return self.screen.has_class("-narrow", "-side-toggled")

    def action_toggle_side(self) -> None:
        """F2: hide or show the side column; on a narrow terminal, open or close the panes over
        the transcript. Closing the overlay gives the prompt its focus back."""
        self.screen.toggle_class("-side-toggled")
        prompt = self.screen.query_one("#prompt")
        if not self.side_overlay_open and prompt.display:
            prompt.focus()

    def on_resize(self, event: Resize) -> None:
        self._sync_width(event.size.width)

    def _sync_width(self, width: int) -> None:
        screen = self.screen
        wanted = {"-narrow": width < NARROW_WIDTH, "-compact": width < COMPACT_WIDTH}
        if all(screen.has_class(name) == wanted[name] for name in wanted):
            return
        # One style update for both: each re-applies the styles of every widget on the screen.
        for name, present in wanted.items():
            screen.set_class(present, name, update=False)
        screen.update_node_styles()

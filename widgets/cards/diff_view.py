"""A unified diff in the theme's colours (+ success, − error, @@ muted), collapsed to its first
lines until clicked (or always whole, in the approval modal)."""

from __future__ import annotations

from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual import events
from textual.reactive import reactive
from textual.widget import Widget

COLLAPSED_LINES = 12


class DiffView(Widget):
    """A unified diff, coloured by line prefix. `collapsed_lines`: how many lines show until a
    click expands it (None: always whole)."""

    DEFAULT_CSS = """
    DiffView {
        height: auto;
        & > .diff--added { color: $success; }
        & > .diff--removed { color: $error; }
        & > .diff--hunk { color: $muted-text; }
        & > .diff--file { text-style: bold; }
        & > .diff--more { color: $muted-text; text-style: italic; }
    }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "diff--added",
        "diff--removed",
        "diff--hunk",
        "diff--file",
        "diff--more",
    }

    expanded: reactive[bool] = reactive(False, layout=True)
    """Whether every line shows (a collapsed diff shows `collapsed_lines`)."""

    def __init__(
        self, diff: str, *, collapsed_lines: int | None = COLLAPSED_LINES, classes: str = ""
    ) -> None:
        super().__init__(classes=classes)
        self.diff = diff
        self.collapsed_lines = collapsed_lines

    @property
    def lines(self) -> list[str]:
        return self.diff.splitlines()

    @property
    def hidden_lines(self) -> int:
        """How many lines the collapsed view leaves out."""
        if self.expanded or self.collapsed_lines is None:
            return 0
        return max(0, len(self.lines) - self.collapsed_lines)

    def _style(self, line: str) -> Style:
        part = diff_part(line)
        return self.get_component_rich_style(f"diff--{part}", partial=True) if part else Style()

    def render(self) -> Text:
        lines = self.lines
        hidden = self.hidden_lines
        shown = lines[: len(lines) - hidden]
        text = Text(no_wrap=False)
        for number, line in enumerate(shown):
            text.append(line, style=self._style(line))
            if number < len(shown) - 1 or hidden:
                text.append("\n")
        if hidden:
            more = f"… {hidden} more lines (click to show)"
            text.append(more, style=self.get_component_rich_style("diff--more", partial=True))
        return text

    def on_click(self, event: events.Click) -> None:
        if self.collapsed_lines is not None and len(self.lines) > self.collapsed_lines:
            event.stop()
            self.expanded = not self.expanded

    def set_diff(self, diff: str) -> None:
        self.diff = diff
        self.refresh(layout=True)


def diff_part(line: str) -> str | None:
    """What a line of a unified diff is: "file", "added", "removed", "hunk", or None."""
    if line.startswith(("+++", "---", "diff --git", "index ")):
        return "file"
    if line.startswith(("+", "-", "@@")):
        return {"+": "added", "-": "removed", "@": "hunk"}[line[0]]
    return None

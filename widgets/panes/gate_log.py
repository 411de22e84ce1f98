"""The flush gate's decisions, newest at the bottom: yes/no, the summary, and (on click) every
condition with its value and threshold."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.reactive import var
from textual.widgets import Static

from shell.events import FlushGateEvaluated, GateCondition
from widgets.format import tokens
from widgets.panes.follow import follow_end

MAX_ENTRIES = 200
HISTORY_SHOWN = 20
"""Of the decisions made before the log (re)composes (a resumed session's, those of a log that
mounted late), the newest shown: 200 entries took 0.3 s to mount. Each entry has its number,
so the first shown says how many came before."""


def condition_line(condition: GateCondition) -> str:
    line = f"{'✓' if condition.ok else '✗'} {condition.name} = {condition.value}"
    if condition.threshold is not None:
        line += f" (threshold {condition.threshold})"
    if condition.detail:
        line += f" — {condition.detail}"
    return line


class GateEntry(Vertical):
    """One gate decision. Click to show its conditions."""

    DEFAULT_CSS = """
    GateEntry {
        height: auto;
        & > .gate--summary { height: auto; color: $muted-text; }
        &.-flush > .gate--summary { color: $flush-block-border; text-style: bold; }
        & > .gate--conditions { height: auto; display: none; padding: 0 0 0 2; color: $muted-text; }
        &.-expanded > .gate--conditions { display: block; }
    }
    """

    expanded: var[bool] = var(False, toggle_class="-expanded")

    def __init__(self, number: int, event: FlushGateEvaluated) -> None:
        super().__init__(classes="-flush" if event.flush else "")
        self.number = number
        self.event = event

    @property
    def summary(self) -> str:
        verdict = "flush" if self.event.flush else "no"
        projected = f"{tokens(self.event.projected_tokens)}/{tokens(self.event.flush_threshold)}"
        return f"#{self.number} {verdict} · {projected} · {self.event.summary}"

    def compose(self) -> ComposeResult:
        yield Static(Text(self.summary), classes="gate--summary")
        lines = [condition_line(c) for c in self.event.conditions] or ["(no conditions reported)"]
        yield Static(Text("\n".join(lines)), classes="gate--conditions")

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.expanded = not self.expanded

    def describe(self) -> str:
        conditions = "; ".join(condition_line(c) for c in self.event.conditions)
        return f"{self.summary} [{conditions}]"


class GateLog(VerticalScroll):
    """Every flush_gate_evaluated, including the ones that said no."""

    DEFAULT_CSS = """
    GateLog { height: 1fr; }
    GateLog > .gate--empty { color: $muted-text; }
    """

    def __init__(
        self, history: Sequence[FlushGateEvaluated] = (), *, id: str | None = None
    ) -> None:
        """`history`: the decisions made before this log mounted, shown first."""
        super().__init__(id=id)
        self._history = history
        self._count = 0

    def on_resize(self) -> None:
        follow_end(self)  # newest at the bottom: follow it until the user scrolls up

    def watch_virtual_size(self) -> None:
        self.call_later(follow_end, self)  # a full reflow sends no Resize for content alone

    def compose(self) -> ComposeResult:
        if not self._history:
            yield Static("no gate decisions yet", classes="gate--empty")
        for number, event in enumerate(self._history[-HISTORY_SHOWN:], start=1):
            yield GateEntry(max(0, len(self._history) - HISTORY_SHOWN) + number, event)
        self._count = len(self._history)

    async def catch_up(self) -> None:
        """Show what was added to its history since it composed (a resumed past, at once)."""
        if self._count != len(self._history):
            await self.recompose()

    async def add_decision(self, event: FlushGateEvaluated) -> None:
        self._count += 1
        for empty in self.query(".gate--empty"):
            await empty.remove()
        entries = self.query(GateEntry)
        if len(entries) >= MAX_ENTRIES:
            await entries.first().remove()
        await self.mount(GateEntry(self._count, event))

    @property
    def entries(self) -> list[GateEntry]:
        return list(self.query(GateEntry))

"""Where a memory line came from: the lines of the memory files (or the hits of this session's
searches), the highlighted one's provenance, and the turn that wrote it.

Opened by F7 or `/why [FILE:LINE]`. `f` moves to the next list
(search hits, MEMORY.md, today's note, DREAMS.md); the highlighted line is traced by the core
(`shell.why.Why`: git blame, then the session's files) off the UI thread. `t` opens the turn that
wrote it, read-only, with every write that turn made; `h` shows the line's commit in the memory
history. Esc closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Mapping, Sequence
from typing import Any, ClassVar, Protocol

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.notifications import SeverityLevel
from textual.reactive import var
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Static
from textual.worker import WorkerError

from shell.events import (
    Event,
    MemoryForgotten,
    Notice,
    SearchHit,
)
from shell.memory.provenance import ProvenanceError
from shell.text import shorten
from shell.why import Traced, Why
from widgets.host import AgentHost, watched
from widgets.screens.turn import TurnScreen, writes_text
from widgets.screens.why_lists import GLOBAL, Listing, Place, lists_for, reread
from widgets.source import SettingsLike


class WhyScreen(ModalScreen[None]):
    """Lines, the highlighted one's provenance, and the way to its turn and commit."""

    DEFAULT_CSS = """
    WhyScreen {
        align: center middle;
        & > #why {
            width: 96%;
            height: 92%;
            border: round $primary;
            border-title-color: $primary;
            background: $surface;
            padding: 0 1;
        }
        & #why-table { height: auto; max-height: 12; }
        & #why-trace { height: 1fr; }
        & #why-trace > Static { height: auto; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f", "next_listing", "Next list"),
        Binding("t", "turn", "Turn"),
        Binding("h", "commit", "Commit"),
        Binding("x", "forget", "Forget"),
        Binding("y", "confirm", "Yes, forget"),
        Binding("n", "cancel", "No, keep"),
        Binding("escape", "close", "Close"),
    ]

    pending: var[Place | None] = var(None, bindings=True)
    """The line whose forgetting waits for `y` (the footer then offers y and n only)."""

    def __init__(
        self,
        whys: Mapping[str, Why],
        listings: list[Listing],
        *,
        select: Place | None = None,
        host: AgentHost | None = None,
    ):
        super().__init__()
        self.whys = whys
        """The session's memories, by the label their hits show."""
        self.cairn = host
        """Runs the forget through the agent; None (a screen without one) offers no forget."""
        self.listings = [listing for listing in listings if listing.places] or listings[:1]
        self.index = 0
        self.select = select
        self.traced: Traced | None = None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While a forget asks y/n, only y, n and escape apply; y and n only then."""
        if action in ("confirm", "cancel"):
            return self.pending is not None
        if action == "forget" and self.cairn is None:
            return False
        return self.pending is None or action == "close"

    def compose(self) -> ComposeResult:
        with Vertical(id="why"):
            yield DataTable(id="why-table", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="why-trace"):
                yield Static("", id="why-trace-text")
        yield Footer()

    async def on_mount(self) -> None:
        table = self.query_one(DataTable)
        if self.select is not None:
            self._show_selected(self.select)
        await self._fill()
        table.focus()

    def _show_selected(self, place: Place) -> None:
        for index, listing in enumerate(self.listings):
            if place in listing.places:
                self.index = index
                return
        self.listings.insert(0, Listing(place.name, [place]))
        self.index = 0

    @property
    def listing(self) -> Listing:
        return self.listings[self.index]

    async def _fill(self) -> None:
        listing = self.listing
        box = self.query_one("#why", Vertical)
        box.border_title = f"why · {listing.title} ({self.index + 1}/{len(self.listings)})"
        table = self.query_one(DataTable)
        table.clear(columns=True)
        table.add_columns("line", "text")
        for place in listing.places:
            shown = str(place.line) if listing.file is not None else place.name
            table.add_row(Text(shown), Text(place.text))  # memory text is not markup
        if not listing.places:
            self._say(Text("nothing to trace here yet", style="dim"))
            return
        row = 0
        if self.select is not None:
            row = next((i for i, p in enumerate(listing.places) if p == self.select), 0)
            self.select = None
        table.move_cursor(row=row)
        await self._trace(listing.places[row])

    @property
    def current(self) -> Place | None:
        places, row = self.listing.places, self.query_one(DataTable).cursor_row
        return places[row] if 0 <= row < len(places) else None

    @on(DataTable.RowHighlighted)
    async def _highlighted(self) -> None:
        if (place := self.current) is not None:
            await self._trace(place)

    async def _trace(self, place: Place) -> None:
        try:
            why = self.whys[place.scope]
            self.traced = await asyncio.to_thread(why.line, place.path, place.line)
        except ProvenanceError as error:
            self.traced = None
            self._say(Text(str(error), style="bold red"))
            return
        self._say(trace_text(self.traced))

    def _say(self, text: Text) -> None:
        self.query_one("#why-trace-text", Static).update(text)

    async def action_next_listing(self) -> None:
        self.index = (self.index + 1) % len(self.listings)
        await self._fill()

    async def action_turn(self) -> None:
        """The turn that wrote the highlighted line, read-only."""
        traced = self.traced
        if traced is None or traced.turn is None:
            why = traced.turn_missing if traced else None
            self.notify(why or "no session wrote this line", timeout=4)
            return
        await self.app.push_screen(TurnScreen(traced.turn, traced.writes))

    async def action_commit(self) -> None:
        """The highlighted line's commit, in the memory history."""
        if self.traced is None or not self.traced.provenance.steps:
            self.notify("no commit holds this line", timeout=3)
            return
        sha = self.traced.provenance.steps[0].commit.sha
        self.dismiss()
        await self.app.run_action(f"history('{sha}')")

    def _ready(self) -> bool:
        """Whether a forget can run now: the agent is built and no turn is under way."""
        host = self.cairn
        if host is None or not host.started or host.busy:
            self.notify("forget when Cairn has started and no turn runs", timeout=3)
            return False
        return True

    async def action_forget(self) -> None:
        """What forgetting the highlighted line rewrites, and the question."""
        place = self.current
        if place is None or self.cairn is None or not self._ready():
            return
        where = f"{place.path}:{place.line}"
        seen = [e async for e in self.cairn.agent.forget(where, apply=False, scope=place.scope)]
        preview = next((e for e in seen if isinstance(e, MemoryForgotten)), None)
        if preview is None:
            self._say(Text(_said(seen) or "this line cannot be forgotten", style="bold red"))
            return
        self.pending = place
        self._say(forget_text(place, preview))

    def action_confirm(self) -> None:
        if (place := self.pending) is None or not self._ready():
            return
        self.pending = None
        self._forget(place)

    @work(exclusive=True, group="why")
    async def _forget(self, place: Place) -> None:
        """The agent's forget, run by the app as a core stream (the bridge shows its events,
        the trace keeps them); then the list again, and what it did."""
        assert self.cairn is not None
        seen: list[Event] = []
        agent, where = self.cairn.agent, f"{place.path}:{place.line}"
        forgetting = agent.forget(where, apply=True, scope=place.scope)
        worker = self.cairn.run_events(lambda: watched(forgetting, seen))
        with contextlib.suppress(WorkerError):
            await worker.wait()
        done = next((e for e in seen if isinstance(e, MemoryForgotten)), None)
        self.listings = [
            await asyncio.to_thread(reread, self.whys, listing) for listing in self.listings
        ]
        await self._fill()
        if done is None:
            self.notify(_said(seen) or "not forgotten", severity="warning", timeout=5)
            return
        rewritten = f"{done.commits} commit(s) rewritten"
        self.notify(f"forgotten: {', '.join(done.places)} · {rewritten}", timeout=5)

    async def action_cancel(self) -> None:
        self.pending = None
        if (place := self.current) is not None:
            await self._trace(place)

    async def action_close(self) -> None:
        if self.pending is not None:
            await self.action_cancel()
            return
        self.dismiss()


def forget_text(place: Place, preview: MemoryForgotten) -> Text:
    """The question before a forget: the line, where it is, what would be rewritten."""
    text = Text(f"Forget {place.name}?\n\n", style="bold")
    text.append(f"{place.text.strip()}\n\n")
    text.append(f"in {', '.join(preview.places)}\n")
    files = ", ".join(preview.files) or "none"
    text.append(f"history: {preview.commits} commit(s) rewritten, files: {files}\n")
    text.append(f".cairn files holding it: {preview.transcripts}\n", style="dim")
    text.append(
        "\nIt leaves the files, every commit, the index, the hit log, the dream state and the "
        "transcripts, on this machine and (at their next sync) every other; a tombstone (a "
        "hash, not the text) keeps it from being written back.\n",
        style="dim",
    )
    text.append("y: forget · n: keep\n", style="bold yellow")
    return text


def _said(events: list[Event]) -> str:
    return next((e.message for e in reversed(events) if isinstance(e, Notice)), "")


def trace_text(traced: Traced) -> Text:
    """A line's provenance as the screen shows it."""
    p = traced.provenance
    text = Text(f"{p.path}:{p.line}  ", style="bold")
    text.append(f"{p.text.strip()}\n\n", style="")
    if not p.steps:
        text.append(f"no provenance: {p.unknown}\n", style="bold red")
        return text
    for step in p.steps:
        text.append(f"{step.summary()}\n")
        if (step.path, step.line) != (p.path, p.line):
            text.append(f"   as {step.path}:{step.line}\n", style="dim")
    if traced.turn_missing:
        text.append(f"\n{traced.turn_missing}\n", style="dim")
    if (turn := traced.turn) is not None:
        text.append(f"\nsession {turn.session_id} turn {turn.turn} ", style="bold")
        text.append("(t: open it)\n", style="dim")
        if turn.prompt is not None:
            text.append("asked    ", style="dim")
            text.append(f"{shorten(' '.join(turn.prompt.split()), 400)}\n")
        if turn.call is not None:
            text.append("call     ", style="dim")
            arguments = json.dumps(turn.call.arguments, ensure_ascii=False)
            text.append(f"{turn.call.name} {shorten(arguments, 400)}\n")
        text.append_text(writes_text(traced.writes))
    return text


class WhyHost(AgentHost, Protocol):
    """What opening the screen needs of the app (`CairnApp` has this shape)."""

    def notify(
        self, message: str, *, severity: SeverityLevel = ..., timeout: float | None = ...
    ) -> None: ...

    def push_screen(self, screen: Screen[Any]) -> Awaitable[Any]: ...


async def open_why(
    host: WhyHost, settings: SettingsLike, hits: Sequence[SearchHit], place: str = ""
) -> None:
    """Push the why screen (built off the UI thread: it reads files), or say why `place` cannot
    be shown."""
    try:
        screen = await asyncio.to_thread(why_screen, settings, hits, place, host)
    except ValueError as error:
        host.notify(str(error), severity="warning", timeout=4)
        return
    await host.push_screen(screen)


def why_screen(
    settings: SettingsLike,
    hits: Sequence[SearchHit],
    place: str = "",
    host: AgentHost | None = None,
) -> WhyScreen:
    """The screen on the session's search hits and the memory panes' files, at `place` (FILE:LINE)
    when given. Reads files: run it off the UI thread. Raises ValueError for a bad `place`."""
    memories = host.agent.memories() if host is not None and host.started else {}
    roots = {GLOBAL: settings.workspace, **memories}
    whys = {label: Why.at(root, settings.state_dir) for label, root in roots.items()}
    listings, select = lists_for(whys, settings.today(), hits, place)
    return WhyScreen(whys, listings, select=select, host=host)

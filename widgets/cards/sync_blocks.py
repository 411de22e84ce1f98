"""The transcript's sync blocks: a sync that brought commits in (or left conflicts), and a
conflict shown for review as a diff, resolved with one key (F6, or a click on the block)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from shell.events import SyncConflict, SyncFinished, SyncResolved
from shell.sync.describe import sync_line
from widgets.cards.diff_view import DiffView
from widgets.format import key_name

RESOLVE_KEY = "f6"
"""Opens the open conflicts (`CairnApp.action_resolve_conflicts`)."""
CHOICES = "l keep local · r take remote · b both"


def sync_block_text(event: SyncFinished) -> str:
    """What came in (commits, files, +lines), the changed files, and the conflicts."""
    lines = [sync_line(event) or ""]
    if event.changed:
        lines.append("changed: " + ", ".join(event.changed))
    if event.outside_edits:
        lines.append("committed first (edited outside Cairn): " + ", ".join(event.outside_edits))
    if event.conflicts:
        lines.append(
            f"conflicts: {', '.join(event.conflicts)} — {key_name(RESOLVE_KEY)} to resolve"
        )
    return "\n".join(lines)


class SyncBlock(Static):
    """A sync that brought commits in from the remote, or left conflicts for review."""

    DEFAULT_CSS = """
    SyncBlock {
        height: auto;
        margin: 0 0 1 0;
        padding: 0 1;
        border: round $accent;
        border-title-color: $accent;
        &.-conflicts { border: round $warning; border-title-color: $warning; }
    }
    """

    def __init__(self, event: SyncFinished) -> None:
        self.text = sync_block_text(event)
        super().__init__(Text(self.text), classes="-conflicts" if event.conflicts else "")
        self.border_title = "⇅ sync"

    def describe(self) -> str:
        return f"sync: {self.text}"


class ConflictBlock(Vertical):
    """A curated file both sides changed: both kept until a person chooses, the remote's side
    shown as a diff (local → remote). A click (or F6) opens the resolve modal on it."""

    DEFAULT_CSS = """
    ConflictBlock {
        height: auto;
        margin: 0 0 1 0;
        padding: 0 1;
        border: round $warning;
        border-title-color: $warning;
        & > Static { height: auto; }
        & > .conflict--hint { color: $muted-text; }
        &.-resolved { border: round $muted-text; border-title-color: $muted-text; }
    }
    """

    def __init__(self, event: SyncConflict) -> None:
        super().__init__()
        self.event = event
        self.text = sync_line(event) or ""
        self.hint = f"{key_name(RESOLVE_KEY)} or click: {CHOICES}"
        self.border_title = f"⇅ sync conflict · {event.file}"
        self.tooltip = "click: resolve this conflict"

    @property
    def file(self) -> str:
        return self.event.file

    def compose(self) -> ComposeResult:
        yield Static(Text(self.text), classes="conflict--line")
        yield DiffView(self.event.diff)
        yield Static(Text(self.hint), classes="conflict--hint")

    def resolve(self, event: SyncResolved) -> None:
        self.add_class("-resolved")
        self.hint = sync_line(event) or ""
        if self.is_mounted:  # else compose shows it (a resumed past is built before it mounts)
            self.query_one(".conflict--hint", Static).update(Text(self.hint))

    async def on_click(self) -> None:
        if not self.has_class("-resolved"):
            await self.app.run_action(f"resolve_conflicts({self.file!r})")

    def describe(self) -> str:
        return f"conflict: {self.text}\n{self.event.diff.rstrip()}\n{self.hint}"

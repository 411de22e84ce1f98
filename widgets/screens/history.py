"""The memory's history: every commit of the memory the panes show (the session's own: its
project's when one is open), its diff in colour, and its revert.

Opened by F5, `/history`, or a click on a write card (with that commit selected). `r` shows what
reverting the highlighted commit will change (the reverse diff, `AgentSource.revert_preview`)
and asks; `y` makes the revert as a new commit through the core (`AgentSource.revert`), run by
the app as any core stream: its `MemoryWritten` events reach the transcript, the panes and the
git log through the bridge, and the trace. A revert that no longer applies says why and changes
nothing. Esc closes.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.reactive import var
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Static
from textual.worker import WorkerError

from shell.events import Event, MemoryWritten, Notice
from shell.git.history import HistoryCommit, MemoryHistory
from shell.text import short_sha, shorten
from widgets.cards.diff_view import diff_part
from widgets.host import AgentHost, watched

LIMIT = 200


_STYLES = {"file": "bold", "added": "green", "removed": "red", "hunk": "cyan"}


def coloured_diff(diff: str) -> Text:
    """A unified diff, coloured by line prefix."""
    text = Text()
    for line in diff.splitlines():
        text.append(line + "\n", style=_STYLES.get(diff_part(line) or "", ""))
    text.rstrip()
    return text


class HistoryScreen(ModalScreen[None]):
    """The commits (newest first), the highlighted one's diff, and a revert that asks first."""

    DEFAULT_CSS = """
    HistoryScreen {
        align: center middle;
        & > #history {
            width: 96%;
            height: 92%;
            border: round $primary;
            border-title-color: $primary;
            background: $surface;
            padding: 0 1;
        }
        & #history-table { height: auto; max-height: 12; }
        & #history-note { height: auto; color: $warning; }
        & #history-diff { height: 1fr; }
        & #history-diff > Static { height: auto; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "revert", "Revert"),
        Binding("y", "confirm", "Yes, revert"),
        Binding("n", "cancel", "No, keep"),
        Binding("escape", "close", "Close"),
    ]

    pending: var[str | None] = var(None, bindings=True)
    """The commit whose revert waits for `y` (the footer then offers y and n, not r)."""

    def __init__(self, host: AgentHost, workspace: Path, *, select: str = "") -> None:
        super().__init__()
        self.cairn = host
        self.history = MemoryHistory(workspace)
        """For reading the commits and their diffs (also before the agent is built); a revert
        goes through the agent."""
        self.select = select
        self.commits: list[HistoryCommit] = []
        self._noted: str | None = None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While a revert asks y/n, only y, n and escape apply; y and n only then."""
        if action in ("confirm", "cancel"):
            return self.pending is not None
        return action != "revert" or self.pending is None

    def compose(self) -> ComposeResult:
        with Vertical(id="history") as box:
            box.border_title = "memory history"
            yield DataTable(id="history-table", cursor_type="row", zebra_stripes=True)
            yield Static("", id="history-note")
            with VerticalScroll(id="history-diff"):
                yield Static("", id="history-diff-text")
        yield Footer()

    async def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("sha", "when", "kind", "session · turn", "what", "files")
        await self.reload()
        table.focus()

    async def reload(self) -> None:
        self.commits = await asyncio.to_thread(self.history.commits, LIMIT)
        table = self.query_one(DataTable)
        table.clear()
        for commit in self.commits:
            where = f"{commit.session[-13:]} · {commit.turn}" if commit.session else ""
            table.add_row(
                commit.short,
                f"{commit.when:%m-%d %H:%M}",
                commit.kind,
                where,
                Text(shorten(commit.subject.partition("): ")[2] or commit.subject, 36)),
                Text(shorten(", ".join(commit.files), 24)),  # a subject is not markup
                key=commit.sha,
            )
        if not self.commits:
            self.note("no commits yet")
            return
        row = next((i for i, c in enumerate(self.commits) if c.sha.startswith(self.select)), 0)
        table.move_cursor(row=row)
        await self.show_diff(self.commits[row])

    @property
    def current(self) -> HistoryCommit | None:
        table = self.query_one(DataTable)
        if not self.commits or not 0 <= table.cursor_row < len(self.commits):
            return None
        return self.commits[table.cursor_row]

    def note(self, text: str) -> None:
        """Say something about the highlighted commit (until another one is highlighted)."""
        self._noted = self.current.sha if self.current and text else None
        self.query_one("#history-note", Static).update(Text(text))

    async def show_diff(self, commit: HistoryCommit) -> None:
        diff = await asyncio.to_thread(self.history.diff, commit.sha)
        body = Text(f"{commit.short} {commit.message}\n\n", style="dim")
        body.append_text(coloured_diff(diff))
        self.query_one("#history-diff-text", Static).update(body)

    @on(DataTable.RowHighlighted)
    async def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if self.pending is None and (commit := self.current) is not None:
            if commit.sha != self._noted:
                self.note("")
            await self.show_diff(commit)

    def _ready(self) -> bool:
        """Whether a revert can run now: the agent is built and no turn is under way."""
        if not self.cairn.started:
            self.note("Cairn is still starting: revert in a moment")
        elif self.cairn.busy:
            self.note("a turn is running: revert when it has ended")
        return self.cairn.started and not self.cairn.busy

    async def action_revert(self) -> None:
        """Show what reverting the highlighted commit changes, and ask."""
        commit = self.current
        if commit is None or not self._ready():
            return
        preview = await asyncio.to_thread(self.cairn.agent.revert_preview, commit.sha)
        body = Text(f"reverting {commit.short} will change:\n\n", style="bold")
        body.append_text(coloured_diff(preview.diff))
        self.query_one("#history-diff-text", Static).update(body)
        if not preview.applies:
            self.note(f"cannot revert {commit.short}: {preview.reason}")
            return
        self.pending = commit.sha
        self.note(f"Revert {commit.short} as a new commit? y: revert · n: keep")

    def action_confirm(self) -> None:
        if self.pending is None or not self._ready():
            return
        sha, self.pending = self.pending, None
        self._revert(sha)

    @work(exclusive=True, group="history")
    async def _revert(self, sha: str) -> None:
        """The agent's revert, run by the app as a core stream (the bridge shows its events,
        the trace keeps them); then the list again, and what became of it."""
        seen: list[Event] = []
        worker = self.cairn.run_events(lambda: watched(self.cairn.agent.revert(sha), seen))
        with contextlib.suppress(WorkerError):
            await worker.wait()
        written = [event for event in seen if isinstance(event, MemoryWritten)]
        if not written:
            refusals = [event.message for event in seen if isinstance(event, Notice)]
            self.note(refusals[-1] if refusals else f"{short_sha(sha)} not reverted")
            return
        new = written[0].commit or ""
        self.select = new
        await self.reload()
        files = ", ".join(event.path for event in written)
        self.note(f"reverted {short_sha(sha)} as {short_sha(new)} ({files})")

    async def action_cancel(self) -> None:
        if self.pending is not None:
            self.pending = None
            if (commit := self.current) is not None:
                await self.show_diff(commit)
            self.note("nothing changed")

    async def action_close(self) -> None:
        if self.pending is not None:
            await self.action_cancel()
            return
        self.dismiss()

"""The sync conflicts modal (F6, or a click on a conflict block): the open conflicts, the diff
of the highlighted one (local → remote), and one key to settle it: `l` keep local, `r` take the
remote's, `b` both (local, then the remote's lines it lacks). Esc closes. The choice goes to the
core (`Agent.resolve_conflict`); what it reports comes back through the bridge."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from shell.events import SyncConflict, Take
from widgets.cards.diff_view import DiffView
from widgets.cards.sync_blocks import CHOICES
from widgets.host import AgentHost

BESIDE_BODY = 10
"""Rows the modal needs besides the diff: borders, the file list, the summary, the hint."""


def conflict_summary(file: str, event: SyncConflict | None) -> str:
    if event is None:
        return (
            f"{file}: both sides changed it (left open before this session: no diff here); "
            f"`cairn sync --resolve {file} local|remote|both` shows it too"
        )
    return f"{file}: both sides kept until you choose; the remote's version is in {event.side_file}"


class ConflictScreen(ModalScreen[Take | None]):
    """The open sync conflicts; dismissed with the choice made (None: closed)."""

    DEFAULT_CSS = """
    ConflictScreen {
        align: center middle;
        & #conflict-files { height: auto; max-height: 4; border: none; padding: 0; }
        & #conflict-summary { height: auto; margin: 1 0 0 0; }
        & #conflict-body {
            height: auto;
            max-height: 12;
            margin: 1 0 0 0;
            background: $background;
            scrollbar-size-vertical: 1;
        }
        & #conflict-body > * { height: auto; }
        & #conflict-hint { height: 1; margin: 1 0 0 0; color: $muted-text; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("l", "take('local')", "Keep local"),
        Binding("r", "take('remote')", "Take remote"),
        Binding("b", "take('both')", "Both"),
        Binding("escape", "close", "Close"),
    ]

    def __init__(
        self, conflicts: dict[str, SyncConflict | None], host: AgentHost, *, select: str = ""
    ) -> None:
        super().__init__()
        self.conflicts = dict(conflicts)
        self.files = list(self.conflicts)
        self.selected = select if select in self.conflicts else self.files[0]
        self._host = host
        self.taken: Take | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="conflicts", classes="modal-box") as box:
            box.border_title = f"sync conflicts ({len(self.files)})"
            yield OptionList(
                *(Option(file, id=file) for file in self.files), id="conflict-files", compact=True
            )
            yield Static(id="conflict-summary")
            with VerticalScroll(id="conflict-body", can_focus=False):
                yield DiffView("", collapsed_lines=None)
            others = " · ↑↓ another file" if len(self.files) > 1 else ""
            yield Static(Text(f"{CHOICES}{others} · esc close"), id="conflict-hint")

    def on_mount(self) -> None:
        files = self.query_one(OptionList)
        files.highlighted = self.files.index(self.selected)
        files.focus()
        self._show(self.selected)

    def on_resize(self, event: events.Resize) -> None:
        body = self.query_one("#conflict-body")
        body.styles.max_height = max(3, event.size.height - BESIDE_BODY)

    @on(OptionList.OptionHighlighted, "#conflict-files")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        if event.option_id:
            self._show(event.option_id)

    def _show(self, file: str) -> None:
        self.selected = file
        event = self.conflicts[file]
        self.query_one("#conflict-summary", Static).update(Text(conflict_summary(file, event)))
        self.query_one(DiffView).set_diff(event.diff if event else "")

    def action_take(self, take: Take) -> None:
        if self.taken is not None:
            return
        self.taken = take
        file, host = self.selected, self._host
        host.run_background(lambda: host.agent.resolve_conflict(file, take))
        self.dismiss(take)

    def action_close(self) -> None:
        self.dismiss(None)

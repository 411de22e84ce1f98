"""The prompt line at the bottom: Enter submits, up/down walk through what was sent before."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import Input

IDLE_PLACEHOLDER = "Ask, or /help for the commands (ctrl+p finds them too) — Enter sends"
BUSY_PLACEHOLDER = "Working… Enter queues the next prompt, Esc cancels this turn"


class Prompt(Input):
    """A single-line prompt with history. Submissions arrive as `Input.Submitted`."""

    DEFAULT_CSS = """
    Prompt { height: 3; border: tall $primary 40%; }
    Prompt:focus { border: tall $primary; }
    Prompt.-busy { border: tall $warning 60%; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "history(-1)", "Previous", show=False),
        Binding("down", "history(1)", "Next", show=False),
        # An Enter typed before the app took the terminal was turned into "\n" by the tty's
        # cooked mode (ICRNL): it must still send what was typed ahead.
        Binding("ctrl+j", "submit", "Send", show=False),
    ]

    CURSOR_BLINK: ClassVar[bool] = True
    """Tests turn this off so snapshots are deterministic."""

    def __init__(self, *, id: str | None = None) -> None:
        # Focus coming back (F2, an overlay closed, a key typed in a pane) must not select the
        # draft: the next key would replace it.
        super().__init__(placeholder=IDLE_PLACEHOLDER, id=id, select_on_focus=False)
        self.history: list[str] = []
        self._history_index = 0

    def on_mount(self) -> None:
        self.cursor_blink = self.CURSOR_BLINK

    def remember(self, text: str) -> None:
        if text and (not self.history or self.history[-1] != text):
            self.history.append(text)
        self._history_index = len(self.history)

    def action_history(self, step: int) -> None:
        if not self.history:
            return
        self._history_index = max(0, min(len(self.history), self._history_index + step))
        self.value = (
            self.history[self._history_index] if self._history_index < len(self.history) else ""
        )
        self.cursor_position = len(self.value)

    def show_busy(self, busy: bool) -> None:
        self.set_class(busy, "-busy")
        self.placeholder = BUSY_PLACEHOLDER if busy else IDLE_PLACEHOLDER

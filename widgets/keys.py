"""The app's own keys: what ctrl+c does, where typed keys go, and the footer that shows them.

ctrl+c, in this order: copies the selection when there is one (the transcript's, or the focused
input's) to the clipboard, by OSC 52 so it works over SSH; else cancels the running turn (as
Esc does); else arms quitting: a notice says "ctrl+c again to quit", and a second ctrl+c
within QUIT_ARM_S quits. ctrl+q quits at once. The footer names what ctrl+c would do now.

Keys typed for the prompt: before the app hands a printable key (or a paste) to the focused
widget, the main screen may move the focus to the prompt (`MainScreen.claim`): every key of a
burst then reaches the prompt, in order.
"""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.timer import Timer
from textual.widgets import Footer, Input, TextArea

from widgets.screens.main import MainScreen
from widgets.terminal import TerminalApp

QUIT_ARM_S = 3.0
"""How long after a first ctrl+c (with nothing to copy or cancel) a second one quits."""

WIDE_ONLY_ACTIONS = frozenset({"edit_memory", "history", "resolve_conflicts", "why"})
"""Footer keys shown only when the terminal is wide (hidden under `-narrow`, app.tcss)."""

KEYS_HELP: tuple[tuple[str, str], ...] = (
    ("enter", "send the prompt (queued while a turn runs)"),
    ("shift+enter, ctrl+j", "new line in the prompt"),
    ("up / down", "previous / next prompt (from its first / last line)"),
    ("ctrl+o", "expand pasted text folded into a [pasted N lines] chip"),
    ("ctrl+c", "copy selection / cancel turn / quit (press twice)"),
    ("ctrl+q", "quit"),
    ("escape", "cancel the turn under way"),
    ("tab", "answer the approval waiting; else move the focus"),
    ("pageup / pagedown", "scroll the transcript (ctrl+home top, ctrl+end follow)"),
    ("f2", "show or hide the memory panes"),
    ("f3", "review dreaming's proposals"),
    ("f4", "edit the memory file in view in $EDITOR"),
    ("f5", "memory history: diffs and revert"),
    ("f6", "resolve the open sync conflicts"),
    ("f7", "where a memory line came from: its commit, session and turn"),
    ("ctrl+l", "clear the transcript view"),
    ("ctrl+t", "next colour theme"),
    ("ctrl+p", "command palette (Keys there shows these)"),
)
"""The keys as `/help` lists them."""


def key_lines() -> list[str]:
    width = max(len(key) for key, _ in KEYS_HELP)
    return [f"{key.ljust(width)}  {what}" for key, what in KEYS_HELP]


class CairnFooter(Footer):
    """Textual's footer; the keys of WIDE_ONLY_ACTIONS carry `-wide-only` so a narrow terminal
    can hide them."""

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            if getattr(widget, "action", None) in WIDE_ONLY_ACTIONS:
                widget.add_class("-wide-only")
            yield widget


class KeysApp(TerminalApp):
    """ctrl+c and key routing (see the module); `CairnApp` builds on it and has `busy`,
    `started` and `action_cancel_turn`."""

    BINDINGS: ClassVar[list[BindingType]] = [
        # One key, four meanings: `check_action` lets exactly one through, and the footer shows it.
        Binding("ctrl+c", "ctrl_c('copy')", "Copy", priority=True),
        Binding("ctrl+c", "ctrl_c('cancel')", "Cancel", priority=True),
        Binding("ctrl+c", "ctrl_c('arm')", "Quit", priority=True),
        Binding("ctrl+c", "ctrl_c('quit')", "Again to quit", priority=True),
        Binding("ctrl+q", "quit", "Quit", priority=True, show=False),
    ]

    _quit_timer: Timer | None = None

    @property
    def busy(self) -> bool:
        raise NotImplementedError

    @property
    def started(self) -> bool:
        raise NotImplementedError

    async def action_cancel_turn(self) -> None:
        raise NotImplementedError

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, (events.Key, events.Paste)) and isinstance(self.screen, MainScreen):
            self.screen.claim(event)
        await super().on_event(event)

    def selected_text(self) -> str | None:
        """What ctrl+c would copy: the focused input's selection, else the screen's."""
        focused = self.focused
        if isinstance(focused, (Input, TextArea)) and focused.selected_text:
            return focused.selected_text
        try:
            return self.screen.get_selected_text() or None
        except Exception:
            return None

    def ctrl_c_meaning(self) -> str:
        if self.selected_text() is not None:
            return "copy"
        if self.busy and self.started:
            return "cancel"
        return "quit" if self._quit_timer is not None else "arm"

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "ctrl_c":
            return parameters == (self.ctrl_c_meaning(),)
        return super().check_action(action, parameters)

    async def action_ctrl_c(self, meaning: str) -> None:
        match meaning:
            case "copy":
                text = self.selected_text() or ""
                self.copy_to_clipboard(text)
                self.notify(f"copied {len(text):,} characters", timeout=2)
            case "cancel":
                await self.action_cancel_turn()
            case "arm":
                self._quit_timer = self.set_timer(QUIT_ARM_S, self._disarm)
                self.notify("ctrl+c again to quit", timeout=QUIT_ARM_S)
            case _:
                await self.action_quit()
        self.refresh_bindings()

    def _disarm(self) -> None:
        self._quit_timer = None
        self.refresh_bindings()

    def busy_changed(self) -> None:
        """The turn started or ended: what ctrl+c does may have changed."""
        if self._quit_timer is not None:
            self._quit_timer.stop()
            self._quit_timer = None
        self.refresh_bindings()

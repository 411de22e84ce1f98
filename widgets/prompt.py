"""The prompt at the bottom: a `TextArea` that grows to MAX_LINES lines, then scrolls.

Keys: Enter sends (a `Prompt.Submitted`, whose `value` is the text to send); shift+enter and
ctrl+j break the line. An Enter typed before the app took the terminal reaches it as ctrl+j
(the tty's cooked mode turns it into "\\n", ICRNL): a ctrl+j read before the prompt was
mounted sends, one read after breaks the line. Up on the first visual row and down on the last
walk through what was sent before; elsewhere they move the cursor within the draft. The editing
keys are TextArea's, minus F6/F7 (the app's Conflicts key) and PageUp/PageDown (they scroll the
transcript); they are kept out of the keys panel, which lists the prompt's own keys and Cairn's.

Pastes: a bracketed paste goes in whole. One of more than FOLD_LINES lines goes in as a chip,
`[pasted 40 lines]`, that holds the text: sending expands each chip still in the draft back to
its text, and ctrl+o expands every chip in place (one undo step). A chip edited by hand is plain
text from then on (its paste is dropped when sent). A long prompt recalled from history comes
back folded the same way.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from textual import events, on
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import TextArea
from textual.widgets.text_area import Selection

IDLE_PLACEHOLDER = "Ask, or /help for the commands (ctrl+p finds them too) — Enter sends"
BUSY_PLACEHOLDER = "Working… Enter queues the next prompt, Esc cancels this turn"
MAX_LINES = 8
"""The prompt grows to this many lines of text, then scrolls."""
FOLD_LINES = 10
"""A paste of more lines than this goes in as a `[pasted N lines]` chip."""

_NOT_EDITOR_KEYS = {"f6", "f7", "pageup", "pagedown", "up", "down", "ctrl+c"}
"""TextArea keys the prompt leaves to the app (ctrl+c is `widgets.keys`'), or rebinds itself."""


def _editor_binding(binding: Binding) -> Binding | None:
    """A TextArea binding, kept out of the keys panel (`system`), without the keys that are not
    the editor's here."""
    keys = [key for key in binding.key.split(",") if key.strip() not in _NOT_EDITOR_KEYS]
    if not keys:
        return None
    return dataclasses.replace(binding, key=",".join(keys), system=True)


def _editor_bindings() -> list[BindingType]:
    kept = (_editor_binding(b) for b in TextArea.BINDINGS if isinstance(b, Binding))
    return [binding for binding in kept if binding is not None]


class Prompt(TextArea, inherit_bindings=False):
    """A multi-line prompt with history and paste chips (see the module)."""

    DEFAULT_CSS = f"""
    Prompt {{
        height: auto; min-height: 3; max-height: {MAX_LINES + 2};
        border: tall $primary 40%; padding: 0 1;
    }}
    Prompt:focus {{ border: tall $primary; }}
    Prompt.-busy {{ border: tall $warning 60%; }}
    """

    BINDING_GROUP_TITLE = "Prompt"
    BINDINGS: ClassVar[list[BindingType]] = [
        # Shown in the keys panel, not the footer. `_on_key` takes Enter before this binding.
        Binding("enter", "submit", "Send", show=False),
        Binding("shift+enter,ctrl+j", "newline", "New line", show=False),
        Binding("up", "cursor_up", "Previous prompt (on the first line)", show=False),
        Binding("down", "cursor_down", "Next prompt (on the last line)", show=False),
        Binding("ctrl+o", "expand_pastes", "Expand pasted text", show=False),
        *_editor_bindings(),
    ]

    CURSOR_BLINK: ClassVar[bool] = True
    """Tests turn this off so snapshots are deterministic."""

    class Submitted(Message):
        """The user sent the prompt (or the palette sent a command by the prompt's path)."""

        def __init__(self, prompt: Prompt, value: str) -> None:
            super().__init__()
            self.prompt = prompt
            self.value = value
            """The text to send, pasted chips expanded."""

        @property
        def control(self) -> Prompt:
            return self.prompt

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(
            id=id,
            placeholder=IDLE_PLACEHOLDER,
            soft_wrap=True,
            show_line_numbers=False,
            highlight_cursor_line=False,
            tab_behavior="focus",
        )
        self.sent: list[str] = []
        """What was sent, oldest first (TextArea's `history` is its undo history)."""
        self._history_index = 0
        self.chips: dict[str, str] = {}
        """Each paste chip still known to the draft: its label and the text it stands for."""
        self._mounted_at: float | None = None

    @on(events.Mount)
    def _mounted(self, event: events.Mount) -> None:
        self.cursor_blink = self.CURSOR_BLINK
        self._mounted_at = event.time  # the clock Textual stamps each key with

    # --- the draft --------------------------------------------------------------------------

    @property
    def value(self) -> str:
        """The draft as it would be sent: every chip still in it expanded."""
        return self._expanded(self.text)

    @value.setter
    def value(self, text: str) -> None:
        self.chips.clear()
        self._load(text)

    def _load(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)

    def _expanded(self, text: str) -> str:
        for label, pasted in self.chips.items():
            text = text.replace(label, pasted, 1)
        return text

    def clear(self) -> None:  # type: ignore[override]
        self.chips.clear()
        self.load_text("")

    def insert_text_at_cursor(self, text: str) -> None:
        """Type `text` where the cursor is (replacing a selection), as a key would."""
        start, end = self.selection
        self.replace(text, start, end, maintain_selection_offset=False)

    def _fold(self, text: str) -> str:
        """What goes in the draft for `text`: itself, or a chip when it is long."""
        lines = len(text.splitlines()) or 1  # a paste that ends with a newline: no extra line
        if lines <= FOLD_LINES:
            return text
        label = f"[pasted {lines} lines]"
        n = 1
        while label in self.chips:
            n += 1
            label = f"[pasted {lines} lines #{n}]"
        self.chips[label] = text
        return label

    async def _on_paste(self, event: events.Paste) -> None:
        event.prevent_default()  # TextArea's own handler would insert it a second time
        event.stop()
        if self.read_only:
            return
        self.paste(event.text)

    def paste(self, text: str) -> None:
        """Put pasted `text` at the cursor: whole, or as a chip when it is long."""
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        self.insert_text_at_cursor(self._fold(text))
        self.focus()

    def action_expand_pastes(self) -> None:
        """ctrl+o: every chip in the draft becomes the text it holds again."""
        if not any(label in self.text for label in self.chips):
            return
        expanded = self.value
        self.chips.clear()
        self.replace(expanded, (0, 0), self.document.end, maintain_selection_offset=False)

    # --- keys -------------------------------------------------------------------------------

    async def _on_key(self, event: events.Key) -> None:
        # Enter and the new-line keys are handled here, in the prompt's own queue in order with
        # the keys around them, not by bindings: a priority binding runs as the app takes the
        # key (it would send a draft whose last keys are on their way), and a plain one once the
        # key has bubbled up to the app (a burst's next keys are typed before the line breaks:
        # "alpha⏎beta" pasted by tmux became "alphabeta⏎"). TextArea's `_on_key` runs after.
        typed_ahead = self._mounted_at is not None and event.time < self._mounted_at
        if event.key == "enter" or (event.key == "ctrl+j" and typed_ahead):
            event.stop()
            event.prevent_default()
            self.action_submit()
        elif event.key in ("shift+enter", "ctrl+j"):
            event.stop()
            event.prevent_default()
            self.action_newline()

    def action_submit(self) -> None:
        value = self.value
        self.clear()
        self.post_message(self.Submitted(self, value))

    def action_newline(self) -> None:
        self.insert_text_at_cursor("\n")

    def action_cursor_up(self, select: bool = False) -> None:
        if not select and self.selection.is_empty and self._visual_row() == 0:
            self.action_history(-1)
            return
        super().action_cursor_up(select)

    def action_cursor_down(self, select: bool = False) -> None:
        last = self.wrapped_document.height - 1
        if not select and self.selection.is_empty and self._visual_row() >= last:
            self.action_history(1)
            return
        super().action_cursor_down(select)

    def watch_selection(self, previous: Selection, selection: Selection) -> None:
        if previous.is_empty != selection.is_empty and self.is_mounted:
            self.app.refresh_bindings()  # the footer says whether ctrl+c copies

    def _visual_row(self) -> int:
        return self.wrapped_document.location_to_offset(self.cursor_location).y

    # --- history ----------------------------------------------------------------------------

    def remember(self, text: str) -> None:
        if text and (not self.sent or self.sent[-1] != text):
            self.sent.append(text)
        self._history_index = len(self.sent)

    def action_history(self, step: int) -> None:
        if not self.sent:
            return
        self._history_index = max(0, min(len(self.sent), self._history_index + step))
        entry = self.sent[self._history_index] if self._history_index < len(self.sent) else ""
        self.chips.clear()
        self._load(self._fold(entry))

    def show_busy(self, busy: bool) -> None:
        self.set_class(busy, "-busy")
        self.placeholder = BUSY_PLACEHOLDER if busy else IDLE_PLACEHOLDER

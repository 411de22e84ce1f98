"""The approval modal: a call that writes or executes waits until the user answers.

It shows what the call will do (the diff of an edit, the command line, an MCP tool's arguments),
scrollable when long, and three choices: `y` allow once, `a` allow for this session (what that
covers is in the label), `n` deny, then a reason the model sees (enter sends it). Esc denies
without a reason. The answer goes to the core (`Agent.answer_approval`); a decision made another
way (the turn cancelled while it waited) closes the modal too (`close`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from shell.events import ApprovalChoice, ApprovalRequested
from widgets.cards.diff_view import DiffView
from widgets.cards.tool_parts import mcp_parts

BESIDE_BODY = 12
"""Rows the modal needs besides what the call does: borders, summary, choices, reason, hint."""
Answer = Callable[[str, ApprovalChoice, str], bool]
"""`Agent.answer_approval`: (call id, choice, reason) → whether the call was still waiting."""


def choice_labels(event: ApprovalRequested) -> dict[ApprovalChoice, str]:
    return {
        "allow_once": "y  allow once",
        "allow_session": f"a  allow for this session: {event.session_scope}",
        "deny": "n  deny (then say why, if you like)",
    }


class ApprovalScreen(ModalScreen[ApprovalChoice]):
    """One call's approval; dismissed with the choice made."""

    DEFAULT_CSS = """
    ApprovalScreen {
        align: center middle;
        & #approval-summary { height: auto; max-height: 2; text-style: bold; }
        & #approval-body {
            height: auto;
            max-height: 12;
            margin: 1 0 0 0;
            background: $background;
            scrollbar-size-vertical: 1;
        }
        & #approval-body > * { height: auto; }
        & #approval-command { padding: 0 1; }
        & #approval-choices { height: auto; margin: 1 0 0 0; border: none; padding: 0; }
        & #approval-reason { display: none; }
        &.-reason #approval-reason { display: block; }
        & #approval-hint { height: 1; color: $muted-text; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "choose('allow_once')", "Allow once"),
        Binding("a", "choose('allow_session')", "Allow for session"),
        Binding("n", "choose('deny')", "Deny"),
        Binding("escape", "deny_now", "Deny"),
    ]

    def __init__(self, event: ApprovalRequested, answer: Answer) -> None:
        super().__init__()
        self.event = event
        self._answer = answer
        self.answered: ApprovalChoice | None = None

    @property
    def call_id(self) -> str:
        return self.event.call_id

    def compose(self) -> ComposeResult:
        event = self.event
        mcp = mcp_parts(event.tool)
        tool = f"{mcp[0]}: {mcp[1]}" if mcp else event.tool
        with Vertical(id="approval", classes="modal-box") as box:
            box.border_title = f"allow {tool}? ({event.risk})"
            yield Static(Text(event.summary), id="approval-summary")
            with VerticalScroll(id="approval-body", can_focus=False):
                if event.diff:
                    yield DiffView(event.diff, collapsed_lines=None, classes="approval--diff")
                if event.command:
                    yield Static(Text(f"$ {event.command}"), id="approval-command")
                if event.detail:
                    yield Static(Text(event.detail), id="approval-detail")
            labels = choice_labels(event)
            yield OptionList(
                *(Option(label, id=choice) for choice, label in labels.items()),
                id="approval-choices",
                compact=True,
            )
            yield Input(
                placeholder="why not? the model reads this (enter sends; esc: no reason)",
                id="approval-reason",
                compact=True,
            )
            yield Static("y · a · n  or ↑↓ enter · esc deny", id="approval-hint")

    def on_resize(self, event: events.Resize) -> None:
        # What the call does gets the height the rest leaves (a max-height in vh would break
        # the box's auto height).
        body = self.query_one("#approval-body")
        body.styles.max_height = max(3, event.size.height - BESIDE_BODY)

    def on_mount(self) -> None:
        choices = self.query_one(OptionList)
        choices.highlighted = 0
        choices.focus()

    @on(OptionList.OptionSelected, "#approval-choices")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_choose(event.option_id or "deny")

    def action_choose(self, choice: str) -> None:
        match choice:
            case "allow_once" | "allow_session":
                self._decide(choice)
            case _:
                self.add_class("-reason")
                self.query_one("#approval-choices", OptionList).highlighted = 2
                self.query_one("#approval-reason", Input).focus()

    @on(Input.Submitted, "#approval-reason")
    def _reason(self, event: Input.Submitted) -> None:
        event.stop()
        self._decide("deny", event.value.strip())

    def action_deny_now(self) -> None:
        self._decide("deny")

    def _decide(self, choice: ApprovalChoice, reason: str = "") -> None:
        if self.answered is not None:
            return
        self.answered = choice
        self._answer(self.call_id, choice, reason)  # False: decided already (closed anyway)
        self.dismiss(choice)

    def close(self) -> None:
        """The call was decided another way: close without answering."""
        if self.answered is None and self.is_attached:
            self.answered = "deny"
            if self.app.screen is not self:
                self.pop_until_active()  # a palette opened over it goes too
            self.dismiss()

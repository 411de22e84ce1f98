"""An approval: the bar where a call waits, and the modal that answers it.

An approval never takes the focus by itself: the user may be typing the next prompt while the
turn runs, and a word's first letter must not answer it (the `a` of "and" allowing a command for
the session). It waits in the bar above the prompt (with the terminal's bell, and a toast when
another screen is up) until the user opens it deliberately: `tab`, a click on the bar, or
`enter` on an empty prompt a moment after the last key typed. Codex holds an approval back
while the composer is typed in (openai/codex#19513) and, asked for more, while a draft is unsent
(#27374); reports on Claude Code (anthropics/claude-code#37955) ask for no focus stolen and a
deliberate key. Cairn opens nothing by itself.

The modal shows what the call will do (the diff of an edit, the command line, an MCP tool's
arguments), scrollable when long, and three choices: `y` allow once, `a` twice allow for this
session (what that covers is in the label), `n` deny, then a reason the model sees (enter sends
it). Esc denies without a reason. No key answers until the guard (`widgets.keyguard`) has passed
since the modal opened: a key meant for the prompt does nothing. The answer goes to the core
(`Agent.answer_approval`); a decision made another way (the turn cancelled while it waited)
closes the modal too (`close`).
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
from widgets.keyguard import KeyGuard
from widgets.prompt import Prompt

BESIDE_BODY = 12
"""Rows the modal needs besides what the call does: borders, summary, choices, reason, hint."""
Answer = Callable[[str, ApprovalChoice, str], bool]
"""`Agent.answer_approval`: (call id, choice, reason) → whether the call was still waiting."""


def choice_labels(
    event: ApprovalRequested, *, confirming: bool = False
) -> dict[ApprovalChoice, str]:
    session = "a  again to allow" if confirming else "a  allow"
    return {
        "allow_once": "y  allow once",
        "allow_session": f"{session} for this session: {event.session_scope}",
        "deny": "n  deny (then say why, if you like)",
    }


ARMED_HINT = "y once · a twice: session · n deny · ↑↓ enter · esc deny"
GUARDED_HINT = "a moment… (keys typed now do nothing)"
CONFIRM_HINT = "a again or enter: allow for this session · another key: back"


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
        &.-guarded #approval-choices { opacity: 60%; }
        & #approval-reason { display: none; }
        &.-reason #approval-reason { display: block; }
        & #approval-hint { height: 1; color: $muted-text; }
        &.-confirming #approval-hint { color: $warning; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "choose('allow_once')", "Allow once"),
        Binding("a", "choose('allow_session')", "Session (a twice)"),
        Binding("n", "choose('deny')", "Deny"),
        Binding("escape", "deny_now", "Deny"),
    ]

    def __init__(self, event: ApprovalRequested, answer: Answer, guard: KeyGuard) -> None:
        super().__init__()
        self.event = event
        self._answer = answer
        self.guard = guard
        """No key answers until it is open: it starts again when the modal opens."""
        self.answered: ApprovalChoice | None = None
        self.confirming = False
        """`a` was pressed once: a second `a` (or enter) allows for the session."""

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
            yield Static(GUARDED_HINT, id="approval-hint")

    def on_resize(self, event: events.Resize) -> None:
        # What the call does gets the height the rest leaves (a max-height in vh would break
        # the box's auto height).
        body = self.query_one("#approval-body")
        body.styles.max_height = max(3, event.size.height - BESIDE_BODY)

    def on_mount(self) -> None:
        choices = self.query_one(OptionList)
        choices.highlighted = 0
        choices.focus()
        self.guard.touch()
        self.add_class("-guarded")
        self._arm()

    def _arm(self) -> None:
        """Show the keys once the guard is open (a timer only for the look: every key checks
        the guard itself)."""
        if not self.guard.open:
            self.set_timer(self.guard.remaining(), self._arm)
            return
        self.remove_class("-guarded")
        self._hint()

    def _hint(self) -> None:
        hint = CONFIRM_HINT if self.confirming else ARMED_HINT
        self.query_one("#approval-hint", Static).update(hint)

    @on(OptionList.OptionSelected, "#approval-choices")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option_id == "allow_session" and self.guard.open:
            self._decide("allow_session")  # reached with the arrows, or a's second step
            return
        self.action_choose(event.option_id or "deny")

    def action_choose(self, choice: str) -> None:
        if not self.guard.open or self.answered is not None:
            return
        confirmed = self.confirming and choice == "allow_session"
        self._confirm(choice == "allow_session" and not confirmed)
        match choice:
            case "allow_once":
                self._decide(choice)
            case "allow_session" if confirmed:
                self._decide(choice)
            case "allow_session":
                self.query_one("#approval-choices", OptionList).highlighted = 1
            case _:
                self.add_class("-reason")
                self.query_one("#approval-choices", OptionList).highlighted = 2
                self.query_one("#approval-reason", Input).focus()

    def _confirm(self, confirming: bool) -> None:
        if confirming == self.confirming:
            return
        self.confirming = confirming
        self.set_class(confirming, "-confirming")
        labels = choice_labels(self.event, confirming=confirming)
        choices = self.query_one("#approval-choices", OptionList)
        choices.replace_option_prompt("allow_session", labels["allow_session"])
        self._hint()

    def on_key(self, event: events.Key) -> None:
        """A key other than `a` (or enter) after the first `a`: back to the three choices."""
        if self.confirming and event.key not in ("a", "enter"):
            self._confirm(False)

    @on(Input.Submitted, "#approval-reason")
    def _reason(self, event: Input.Submitted) -> None:
        event.stop()
        self._decide("deny", event.value.strip())

    def action_deny_now(self) -> None:
        if self.guard.open:
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


def waiting_line(event: ApprovalRequested, more: int) -> Text:
    mcp = mcp_parts(event.tool)
    tool = f"{mcp[0]}: {mcp[1]}" if mcp else event.tool
    waiting = f" (+{more} more)" if more else ""
    return Text.assemble(
        (f"⚠ allow {tool}?", "bold"), " tab to answer", waiting, f" · {event.summary}"
    )


class ApprovalBar(Static):
    """The line above the prompt while approvals wait; `tab` (or a click) opens the first."""

    DEFAULT_CSS = """
    ApprovalBar {
        display: none; height: 1; padding: 0 1;
        background: $warning 25%; color: $text;
        text-wrap: nowrap; text-overflow: ellipsis;
        &.-waiting { display: block; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.guard = KeyGuard()
        self.waiting: dict[str, ApprovalRequested] = {}
        """The calls that wait for an answer, in the order they asked."""
        self.screens: dict[str, ApprovalScreen] = {}
        """The modal of each waiting call the user opened."""
        self._answer: Answer | None = None

    def wait(self, event: ApprovalRequested, answer: Answer) -> None:
        """`event`'s call waits: show it, ring, and open nothing."""
        self._answer = answer
        self.waiting[event.call_id] = event
        self.guard.touch()
        self._show()
        self.app.bell()
        if self.app.screen is not self.screen:  # the bar is out of sight
            self.app.notify(f"{event.tool} waits for your approval (tab on the main screen)")

    def decided(self, call_id: str) -> None:
        """The call was answered (here or another way: the turn cancelled while it waited)."""
        self.waiting.pop(call_id, None)
        if (screen := self.screens.pop(call_id, None)) is not None:
            screen.close()
        self._show()

    def close_all(self) -> None:
        """Every approval still waiting goes (its turn ended, or its stream was cut)."""
        for call_id in list(self.waiting):
            self.decided(call_id)

    async def open(self) -> bool:
        """Open the modal of the first call waiting; False when none waits."""
        event = next((e for e in self.waiting.values() if e.call_id not in self.screens), None)
        if event is None or self._answer is None:
            return False
        screen = self.screens[event.call_id] = ApprovalScreen(event, self._answer, self.guard)
        await self.app.push_screen(screen)
        return True

    async def key(self, event: events.Key) -> bool:
        """A key the app got before anyone else: True when it opened the approval (`enter` on
        an empty prompt once the guard has passed; the prompt never sees it). Any other key
        typed in the prompt starts the guard again."""
        prompt = self.app.focused
        if event.is_forwarded or not isinstance(prompt, Prompt):
            return False
        if event.key == "enter" and not prompt.value and self.waiting and self.guard.open:
            return await self.open()
        self.guard.touch()
        return False

    async def on_click(self, event: events.Click) -> None:
        event.stop()
        await self.open()

    def _show(self) -> None:
        self.set_class(bool(self.waiting), "-waiting")
        self.screen.refresh_bindings()  # the footer's tab comes and goes
        if self.waiting:
            first = next(iter(self.waiting.values()))
            self.update(waiting_line(first, len(self.waiting) - 1))

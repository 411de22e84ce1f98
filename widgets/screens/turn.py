"""One past turn, read-only (the why screen's `t`): what was asked, each call and its result,
each write, the answer; then every commit the turn made."""

from __future__ import annotations

import json
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from shell.events import (
    AssistantMessage,
    Event,
    MemoryWritten,
    ToolCallFinished,
    ToolCallStarted,
    TurnStarted,
)
from shell.git.history_commit import HistoryCommit
from shell.session.turns import PastTurn
from shell.text import shorten


def writes_text(writes: list[HistoryCommit]) -> Text:
    text = Text(f"its writes ({len(writes)})\n", style="dim")
    for commit in writes:
        text.append(f"  {commit.short} ", style="dim")
        text.append(f"{commit.subject} ({', '.join(commit.files)})\n")
    return text


class TurnScreen(ModalScreen[None]):
    """One past turn, read-only: what was asked, each call and its result, each write, the
    answer; then every commit the turn made."""

    DEFAULT_CSS = """
    TurnScreen {
        align: center middle;
        & > #turn {
            width: 92%;
            height: 88%;
            border: round $secondary;
            border-title-color: $secondary;
            background: $surface;
            padding: 0 1;
        }
        & #turn > Static { height: auto; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close")]

    def __init__(self, turn: PastTurn, writes: list[HistoryCommit]) -> None:
        super().__init__()
        self.turn = turn
        self.writes = writes

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="turn") as box:
            box.border_title = f"session {self.turn.session_id} · turn {self.turn.turn} · read-only"
            yield Static(turn_text(self.turn, self.writes), id="turn-text")
        yield Footer()

    def action_close(self) -> None:
        self.dismiss()


def turn_text(turn: PastTurn, writes: list[HistoryCommit]) -> Text:
    text = Text()
    if turn.prompt is not None:
        text.append("you  ", style="bold")
        text.append(f"{turn.prompt}\n\n")
    for event in turn.events:
        text.append_text(_event_text(event))
    if not turn.events and turn.reply is not None:  # read from the transcript: no calls shown
        text.append(f"{turn.reply}\n\n")
    text.append_text(writes_text(writes))
    return text


def _event_text(event: Event) -> Text:
    match event:
        case ToolCallStarted(name=name, arguments=arguments):
            arguments_text = shorten(json.dumps(arguments, ensure_ascii=False), 300)
            return Text(f"→ {name} {arguments_text}\n", style="cyan")
        case ToolCallFinished(result=result, error=error):
            shown = shorten(" ".join((error or result).split()), 300)
            return Text(f"← {shown}\n", style="red" if error else "dim")
        case MemoryWritten(path=path, commit=commit, lines_added=added):
            where = commit[:7] if commit else "not committed"
            return Text(f"✎ wrote {path} (+{added}) · {where}\n", style="green")
        case AssistantMessage(text=reply) if reply.strip():
            return Text(f"\n{reply}\n\n")
        case TurnStarted():
            return Text()
    return Text()

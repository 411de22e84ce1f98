"""One turn of a session as it was: its prompt, what it showed, and the call that made a commit.

A commit names its session and turn (`session <id> turn <n>`); the turn is read back from this
machine's session files: the view log (`views.py`, every event the turn showed) first, else the
transcript (its messages: the log is bounded and drops old turns). A session made on another
machine is not here (sessions are not synced), which is said, not guessed. The session id comes
from a commit message, which another machine wrote: only a well-formed id is looked up.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from shell.events import (
    AssistantMessage,
    Event,
    MemoryWritten,
    ToolCallStarted,
    TurnStarted,
    to_dict,
)
from shell.session.store import SESSION_ID, SessionStore
from shell.text import display_line


@dataclass(frozen=True)
class WritingCall:
    """The tool call whose write made the commit."""

    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class PastTurn:
    """A turn of a session, read back."""

    session_id: str
    turn: int
    prompt: str | None
    reply: str | None
    """Its last answer in words."""
    call: WritingCall | None
    """The call that made the commit asked about (None for a flush, or when not found)."""
    events: list[Event] = field(default_factory=list)
    """Everything the turn showed, when its view log still holds it (for a read-only view)."""

    def as_json(self) -> dict[str, object]:
        return {
            "session": self.session_id,
            "turn": self.turn,
            "prompt": self.prompt,
            "reply": self.reply,
            "call": None if self.call is None else vars(self.call),
            "events": [to_dict(event) for event in self.events],
        }


def past_turn(
    sessions: SessionStore,
    session_id: str,
    turn: int,
    commit: str | None = None,
    line: str = "",
) -> PastTurn | str:
    """Turn `turn` of session `session_id`, or why it cannot be shown; with the call that made
    `commit` in it, else (a history rewritten since, by `cairn forget` or a redaction, renamed
    the commit) the call whose arguments hold `line`."""
    if not SESSION_ID.fullmatch(session_id):
        return f"{session_id!r} is not a session id"
    if not sessions.has(session_id):
        return f"session {session_id} is not on this machine (sessions are not synced)"
    events = _turn_events(sessions.views.read(session_id), turn)
    found: PastTurn | None
    if events:
        found = _from_events(session_id, turn, events, commit)
    else:
        found = _from_transcript(session_id, turn, sessions.entries(session_id), commit)
    if found is None:
        return f"turn {turn} of session {session_id} is no longer in its files"
    if found.call is None and (bare := display_line(line)):
        calls = _calls(found, sessions.entries(session_id) if not events else [])
        call = next((c for c in calls if bare in json.dumps(c.arguments, ensure_ascii=False)), None)
        return replace(found, call=call)
    return found


def _calls(turn: PastTurn, entries: list[dict[str, Any]]) -> list[WritingCall]:
    """Every call of the turn: from its events, else from its transcript messages."""
    if turn.events:
        return [
            WritingCall(e.name, dict(e.arguments))
            for e in turn.events
            if isinstance(e, ToolCallStarted)
        ]
    chosen = _transcript_turns(entries)
    messages = chosen[turn.turn - 1] if 1 <= turn.turn <= len(chosen) else []
    return [call for m in messages for call in _message_calls(m)]


def _turn_events(events: list[Event], turn: int) -> list[Event]:
    """The last run of events from `TurnStarted(turn)` to the next turn's start."""
    start = None
    for index, event in enumerate(events):
        if isinstance(event, TurnStarted) and event.turn == turn:
            start = index
    if start is None:
        return []
    end = next(
        (i for i in range(start + 1, len(events)) if isinstance(events[i], TurnStarted)),
        len(events),
    )
    return events[start:end]


def _from_events(session_id: str, turn: int, events: list[Event], commit: str | None) -> PastTurn:
    prompt = next((e.prompt for e in events if isinstance(e, TurnStarted)), None)
    replies = [e.text for e in events if isinstance(e, AssistantMessage) and e.text.strip()]
    call = None
    last_call: ToolCallStarted | None = None
    for event in events:
        if isinstance(event, ToolCallStarted):
            last_call = event
        elif isinstance(event, MemoryWritten) and commit and event.commit == commit and last_call:
            call = WritingCall(last_call.name, dict(last_call.arguments))
    reply = replies[-1] if replies else None
    return PastTurn(session_id, turn, prompt, reply, call, events)


def _from_transcript(
    session_id: str, turn: int, entries: list[dict[str, Any]], commit: str | None
) -> PastTurn | None:
    """The turn from the transcript: the one whose tool result names `commit`, else the
    `turn`-th user message's."""
    turns = _transcript_turns(entries)
    chosen = next((t for t in turns if commit and _call_of(t, commit)), None)
    if chosen is None and 1 <= turn <= len(turns):
        chosen = turns[turn - 1]
    if chosen is None:
        return None
    first = chosen[0]
    prompt = first.get("content") if first.get("role") == "user" else None
    replies = [
        m["content"]
        for m in chosen
        if m.get("role") == "assistant" and isinstance(m.get("content"), str) and m["content"]
    ]
    call = _call_of(chosen, commit) if commit else None
    return PastTurn(
        session_id,
        turn,
        prompt if isinstance(prompt, str) else None,
        replies[-1] if replies else None,
        call,
    )


def _transcript_turns(entries: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The transcript's messages, a list per user message."""
    turns: list[list[dict[str, Any]]] = []
    for entry in entries:
        message = entry.get("message") if entry.get("kind") == "message" else None
        if not isinstance(message, dict):
            continue
        if message.get("role") == "user" or not turns:
            turns.append([])
        turns[-1].append(message)
    return turns


def _message_calls(message: dict[str, Any]) -> list[WritingCall]:
    calls = []
    for call in message.get("tool_calls") or []:
        if isinstance(call, dict):
            calls.append(_writing_call(call))
    return calls


def _writing_call(call: dict[str, Any]) -> WritingCall:
    function = call.get("function") or {}
    try:
        arguments = json.loads(function.get("arguments") or "{}")
    except (TypeError, ValueError):
        arguments = {"raw": function.get("arguments")}
    name = str(function.get("name", "?"))
    return WritingCall(name, arguments if isinstance(arguments, dict) else {})


def _call_of(messages: list[dict[str, Any]], commit: str) -> WritingCall | None:
    """The call whose tool result names `commit`."""
    answered = {
        m.get("tool_call_id")
        for m in messages
        if m.get("role") == "tool" and commit in str(m.get("content", ""))
    }
    for message in messages:
        for call in message.get("tool_calls") or []:
            if isinstance(call, dict) and call.get("id") in answered:
                return _writing_call(call)
    return None

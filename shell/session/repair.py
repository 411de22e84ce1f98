"""Every tool call gets its answer: a provider in OpenAI's style refuses a request in which an
assistant message's tool call has no tool message right after it, so a round a kill cut short
(10 calls, 6 results) made every later request of the session fail.

What can be known of a call left without a result: calls run one at a time, and each result is
kept (fsynced) before the next call starts; since this version, each start is kept too, before
the call runs (`Conversation.started`), and the round's assistant entry says so
(`"starts": "recorded"`). So a call with a kept start ran and its result was lost; a call
without one never started. In an older transcript only the first call left without a result may
have run; the ones after it never started.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from shell.messages import summary_message
from shell.session.encodable import escaped_value

STARTS_RECORDED = "recorded"
"""The value of an assistant entry's `starts` when each of its calls' start is kept."""
KILLED = "Cairn stopped"
"""The cause of a cut round found when the session is opened again."""


def unanswered(cause: str, started: bool | None) -> str:
    """The tool message's content for a call left without a result; `cause` says who ended the
    turn ("the turn ended on an error"), `started` whether the call began (None: not known)."""
    if started is None:
        return (
            f"Interrupted: {cause} during this call or just before it; whether it ran is not known."
        )
    if started:
        return (
            f"Interrupted: this call started, but {cause} before its result was kept; what it "
            "did (a write, a command) may have happened."
        )
    return f"Not run: {cause} before this call started."


@dataclass(frozen=True)
class Answered:
    """A call that got its answer here, not from its tool."""

    call_id: str
    name: str
    started: bool | None


def answers(
    calls: list[dict[str, Any]],
    given: Iterable[dict[str, Any]],
    started: set[str],
    *,
    recorded: bool,
    cause: str,
) -> tuple[list[dict[str, Any]], list[Answered]]:
    """The tool messages that follow an assistant message with `calls`: the `given` ones in the
    calls' order (one per call; any other dropped), each call without one answered as
    `unanswered` says; and those answered so."""
    by_id: dict[str, dict[str, Any]] = {}
    for message in given:
        by_id.setdefault(str(message.get("tool_call_id")), message)
    out: list[dict[str, Any]] = []
    made: list[Answered] = []
    for call in calls:
        call_id = str(call.get("id"))
        if call_id in by_id:
            out.append(by_id[call_id])
            continue
        began: bool | None = call_id in started
        if not began and not recorded:
            began = None if not made else False  # only the first left without may have run
        name = str((call.get("function") or {}).get("name", ""))
        made.append(Answered(call_id, name, began))
        out.append({"role": "tool", "tool_call_id": call_id, "content": unanswered(cause, began)})
    return out, made


@dataclass
class Replayed:
    """A transcript read back: the live message list, and what had to be mended."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    answered: list[Answered] = field(default_factory=list)
    """Calls a cut round left without a result, answered here (not in the transcript)."""
    stray: int = 0
    """Tool messages that answered no call of the round before them, left out."""


def replay(entries: Iterable[dict[str, Any]]) -> Replayed:
    """The live message list, as the agent had it: every message entry in order, with each
    compaction replacing everything before its kept tail by the summary message, each drop
    leaving out the oldest turns, and each round of tool calls answered in full."""
    done = Replayed()
    live = done.messages
    started: set[str] = set()
    round_: tuple[dict[str, Any], bool] | None = None  # the open round: its message, `recorded`
    given: list[dict[str, Any]] = []

    def close() -> None:
        nonlocal round_
        if round_ is not None:
            tools, made = answers(
                [c for c in round_[0]["tool_calls"] if isinstance(c, dict)],
                given,
                started,
                recorded=round_[1],
                cause=KILLED,
            )
            done.stray += len(given) - (len(tools) - len(made))
            live.extend(tools)
            done.answered.extend(made)
            round_ = None
            given.clear()

    for entry in entries:
        kind, message = entry.get("kind"), entry.get("message")
        if kind == "event":
            if entry.get("event") == "tool_call_started":
                started.add(str(entry.get("call_id")))
            continue
        if kind == "message" and isinstance(message, dict) and message.get("role") == "tool":
            if round_ is None:
                done.stray += 1
            else:
                given.append(escaped_value(message))
            continue
        close()
        if kind == "message" and isinstance(message, dict):
            live.append(escaped_value(message))
            if message.get("role") == "assistant" and isinstance(message.get("tool_calls"), list):
                round_ = (live[-1], entry.get("starts") == STARTS_RECORDED)
        elif kind == "compaction" and isinstance(entry.get("summary"), str):
            first_kept = max(0, len(live) - int(entry.get("kept", 0)))
            live[:] = [summary_message(entry["summary"]), *live[first_kept:]]
        elif kind == "drop":  # the oldest turns left the context (shell.lifecycle.window_fit)
            head = live[:1] if entry.get("summary_kept") else []
            first_kept = max(len(head), len(live) - int(entry.get("kept", 0)))
            live[:] = [*head, *live[first_kept:]]
    close()
    return done


def mended(replayed: Replayed) -> list[str]:
    """What the replay mended, in words for a notice."""
    said = []
    if made := replayed.answered:
        how = {True: "started, result lost", False: "never started", None: "may have run"}
        calls = ", ".join(f"{a.name or a.call_id} ({how[a.started]})" for a in made)
        said.append(
            f"{len(made)} tool call(s) a stop cut short had no result: answered so the session "
            f"goes on: {calls}."
        )
    if replayed.stray:
        said.append(
            f"Left out {replayed.stray} tool result(s) of this session's transcript that "
            "answered no call."
        )
    return said

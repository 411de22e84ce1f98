"""The live session: its record (the counters), its messages, kept in step with the store, and
the parts of the system prompt that belong to it.

The agent's turn appends to it, the memory lifecycle replaces its messages after a compaction,
moves its flush cycle and sets the re-injected rules, and `/new` restarts it; everyone holds this
one object, so nobody reaches into anybody else for the session.
"""

from __future__ import annotations

from typing import Any

from shell.session.encodable import escaped_value
from shell.session.record import SessionRecord
from shell.session.repair import STARTS_RECORDED, answers
from shell.session.store import SessionStore


class Conversation:
    def __init__(
        self,
        sessions: SessionStore,
        record: SessionRecord,
        messages: list[dict[str, Any]],
    ) -> None:
        """
        Args:
            sessions: Where the record and the transcript are persisted.
            record: The session's counters, loaded or new.
            messages: The live message list (without the system prompt).
        """
        self.sessions = sessions
        self.record = record
        self.messages = messages
        self.reinjection = ""
        """AGENTS.md sections re-injected after this session's last compaction."""
        self.prelude = ""
        """Recent daily notes, for the first turn of a new session only."""
        self._started: set[str] = set()

    @property
    def session_id(self) -> str:
        return self.record.session_id

    def append(self, message: dict[str, Any]) -> None:
        """Add a message to the live list and to the transcript on disk; a lone surrogate in it
        is escaped first, or every later request of the session could not be encoded."""
        message = escaped_value(message)
        self.messages.append(message)
        entry: dict[str, Any] = {"kind": "message", "message": message}
        if message.get("tool_calls"):
            entry["starts"] = STARTS_RECORDED  # see `started`
        self.sessions.append(self.session_id, entry)

    def started(self, call_id: str) -> None:
        """A tool call is about to run: kept (fsynced) before it does, so a session a kill cut
        mid-round can tell the call that ran from the ones that never started
        (`shell.session.repair`)."""
        self._started.add(call_id)
        self.sessions.append(
            self.session_id, {"kind": "event", "event": "tool_call_started", "call_id": call_id}
        )

    def replace(self, messages: list[dict[str, Any]], entry: dict[str, Any]) -> None:
        """After a compaction: the new live list, and the transcript entry that rebuilds it."""
        self.messages = escaped_value(messages)
        self.sessions.append(self.session_id, entry)

    def restart(self, model: str) -> None:
        """`/new`: save this session and start an empty one that gets the startup prelude."""
        self.save()
        self.record = self.sessions.create(model, prelude=True)
        self.messages = []
        self._started = set()
        self.reinjection = self.prelude = ""

    def transcript_bytes(self) -> int:
        return self.sessions.transcript_bytes(self.session_id)

    def origin(self) -> str:
        """Where a memory write came from, for its commit message."""
        return f"session {self.session_id} turn {self.record.turns}"

    def save(self) -> None:
        self.sessions.save(self.record)

    def close_open_tool_calls(self, cause: str) -> None:
        """After a turn ended mid-tools, answer every unanswered tool call of its last round so
        the transcript stays valid for the next request; `cause` says how it ended ("the turn
        ended on an error"), for the answer to say (`shell.session.repair.unanswered`)."""
        for index in range(len(self.messages) - 1, -1, -1):
            message = self.messages[index]
            if message["role"] == "assistant" and message.get("tool_calls"):
                given = [m for m in self.messages[index + 1 :] if m.get("role") == "tool"]
                tools, made = answers(
                    message["tool_calls"], given, self._started, recorded=True, cause=cause
                )
                missing = {a.call_id for a in made}
                for tool in tools:
                    if tool["tool_call_id"] in missing:
                        self.append(tool)
                return
            if message["role"] == "user":
                return

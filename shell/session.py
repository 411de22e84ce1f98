"""Sessions that survive restarts and crashes: a counters record and an append-only transcript.

Under `<state_dir>/sessions/` each session has two files:

- `<id>.json`, the `SessionRecord` (turns, compaction and flush counters, token totals), always
  replaced atomically (temp file, fsync, rename), so a crash leaves the old or the new record;
- `<id>.jsonl`, the transcript: one JSON entry per line, fsynced after each append. The full
  history stays on disk; `messages()` rebuilds the live message list from it, applying each
  compaction entry. A line torn by a crash mid-write is skipped.
"""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from shell.compaction import CompactionResult, summary_message
from shell.fsio import write_atomically


class SessionNotFound(LookupError):
    """No session with that id under the state directory."""


@dataclass
class FlushCycle:
    """Where the memory flush stands in the current compaction cycle: the one owner of the
    counters that make "at most one flush per cycle" hold across restarts.

    A cycle runs from one compaction to the next (`compactions` counts them). A flush that
    wrote or had nothing to write settles the cycle; so does giving up after `max_failures`.
    """

    compactions: int = 0
    flushed_in: int | None = None
    """The cycle whose flush settled it; None when no flush ever did."""
    flushed_at: str | None = None
    """When (ISO): set with `flushed_in`."""
    failures: int = 0
    """Consecutive failed flushes in this cycle."""
    last_error: str | None = None

    def flushed(self) -> bool:
        """Whether a flush already settled this cycle.

        A record that says cycle 0 but no time is a legacy record with an implicit 0: it must
        not suppress the very first flush (OpenClaw's fix for rows written before the field
        existed)."""
        if self.flushed_in is None or self.flushed_in != self.compactions:
            return False
        return self.compactions != 0 or self.flushed_at is not None

    def exhausted(self, max_failures: int) -> bool:
        return self.failures >= max_failures

    def succeeded(self, at: str) -> None:
        """A flush wrote what mattered (or had nothing to write): the cycle is settled."""
        self.flushed_in, self.flushed_at = self.compactions, at
        self.failures, self.last_error = 0, None

    def failed(self, error: str, at: str, max_failures: int) -> bool:
        """A flush failed; True when that was the last try of this cycle (it is then settled,
        so compaction goes ahead without it)."""
        self.failures += 1
        self.last_error = error
        if self.exhausted(max_failures):
            self.flushed_in, self.flushed_at = self.compactions, at
            return True
        return False

    def compacted(self) -> None:
        """A compaction ended the cycle: the next one starts with no failures."""
        self.compactions += 1
        self.failures = 0


_LEGACY_CYCLE = {
    "compaction_count": "compactions",
    "memory_flush_compaction_count": "flushed_in",
    "memory_flush_at": "flushed_at",
    "flush_failures": "failures",
    "flush_last_error": "last_error",
}
"""Records written before the flush cycle was one object kept its counters flat."""


@dataclass
class SessionRecord:
    """The counters of one session; the flush gate and the meters read these."""

    session_id: str
    created_at: str
    updated_at: str
    model: str
    turns: int = 0
    cycle: FlushCycle = dataclasses.field(default_factory=FlushCycle)
    prompt_tokens_total: int = 0
    completion_tokens_total: int = 0
    needs_reinjection: bool = False
    """A compaction happened: the next call gets the AGENTS.md sections again."""
    needs_prelude: bool = False
    """A new session: the first call gets recent daily notes as background."""

    @property
    def compaction_count(self) -> int:
        return self.cycle.compactions

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SessionRecord:
        known = {f.name for f in dataclasses.fields(cls)}
        cycle = dict(data.get("cycle") or {})
        for old, new in _LEGACY_CYCLE.items():
            if old in data:
                cycle.setdefault(new, data[old])
        values = {k: v for k, v in data.items() if k in known and k != "cycle"}
        return cls(**values, cycle=FlushCycle(**cycle))


def compaction_entry(result: CompactionResult) -> dict[str, Any]:
    """The transcript entry for a compaction, for `SessionStore.append`.

    `kept` is how many messages at the end of the live list survived verbatim, so `messages()`
    rebuilds exactly what the agent had: the summary followed by those messages.
    """
    return {
        "kind": "compaction",
        "summary": result.summary,
        "kept": len(result.messages) - 1,
        "tokens_before": result.tokens_before,
        "tokens_after": result.tokens_after,
        "turns_summarised": result.turns_summarised,
    }


class SessionStore:
    """Creates, saves and resumes sessions under `<state_dir>/sessions/`."""

    def __init__(
        self,
        state_dir: Path,
        clock: Callable[[], datetime],
        *,
        token: Callable[[], str] = lambda: secrets.token_hex(3),
    ) -> None:
        """
        Args:
            state_dir: The workspace's `.cairn` directory.
            clock: Now, timezone-aware; stamps records and session ids.
            token: The random suffix of new session ids (injectable for tests).
        """
        self.folder = Path(state_dir) / "sessions"
        self._clock = clock
        self._token = token

    def _record_path(self, session_id: str) -> Path:
        if not session_id or "/" in session_id or "\\" in session_id or session_id[0] == ".":
            raise SessionNotFound(f"not a session id: {session_id!r}")
        return self.folder / f"{session_id}.json"

    def _transcript_path(self, session_id: str) -> Path:
        return self._record_path(session_id).with_suffix(".jsonl")

    def _now(self) -> str:
        return self._clock().isoformat(timespec="seconds")

    def create(self, model: str, *, prelude: bool = True) -> SessionRecord:
        """Start a new session: a sortable id (time + random), a saved record, an empty
        transcript."""
        now = self._clock()
        session_id = f"{now:%Y%m%d-%H%M%S}-{self._token()}"
        stamp = now.isoformat(timespec="seconds")
        record = SessionRecord(session_id, stamp, stamp, model, needs_prelude=prelude)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._transcript_path(session_id).touch()
        self.save(record, touch=False)
        return record

    def load(self, session_id: str) -> SessionRecord:
        """Read a session's record.

        Raises:
            SessionNotFound: when there is no such session.
        """
        path = self._record_path(session_id)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise SessionNotFound(f"no session {session_id!r} in {self.folder}") from None
        return SessionRecord.from_dict(data)

    def latest(self) -> SessionRecord | None:
        """The most recently updated session, or None when there is none."""
        records = []
        for path in self.folder.glob("*.json"):
            try:
                records.append(self.load(path.stem))
            except (SessionNotFound, ValueError, TypeError):
                continue  # a foreign or unreadable file is not a session
        if not records:
            return None
        return max(records, key=lambda r: (r.updated_at, r.session_id))

    def save(self, record: SessionRecord, *, touch: bool = True) -> None:
        """Write the record atomically: temp file, fsync, rename over the old one."""
        if touch:
            record.updated_at = self._now()
        path = self._record_path(record.session_id)
        self.folder.mkdir(parents=True, exist_ok=True)
        data = json.dumps(dataclasses.asdict(record), indent=2, ensure_ascii=False) + "\n"
        write_atomically(path, data, mode=0o600)  # private, as the record has always been

    def append(self, session_id: str, entry: dict[str, Any]) -> None:
        """Append one transcript entry as a JSON line, flushed and fsynced.

        Entries: `{"kind": "message", "message": {...}}`, a `compaction_entry(...)`, or
        `{"kind": "event", ...}` (ignored when rebuilding messages).
        """
        path = self._transcript_path(session_id)
        self.folder.mkdir(parents=True, exist_ok=True)
        line = json.dumps(entry, ensure_ascii=False, default=str) + "\n"
        with open(path, "ab") as handle:
            # A crash mid-write leaves a line without its newline; start a fresh line so the
            # torn fragment cannot swallow this entry.
            if handle.tell() > 0 and not _ends_with_newline(path):
                handle.write(b"\n")
            handle.write(line.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())

    def append_message(self, session_id: str, message: dict[str, Any]) -> None:
        """Shorthand for appending a `{"kind": "message"}` entry."""
        self.append(session_id, {"kind": "message", "message": message})

    def entries(self, session_id: str) -> list[dict[str, Any]]:
        """Every readable transcript entry, in order; torn or corrupt lines are skipped."""
        return self._read(session_id)[0]

    def torn_lines(self, session_id: str) -> int:
        """How many transcript lines could not be read (a crash mid-write tears the last one)."""
        return self._read(session_id)[1]

    def _read(self, session_id: str) -> tuple[list[dict[str, Any]], int]:
        path = self._transcript_path(session_id)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return [], 0
        entries, torn = [], 0
        for line in raw.splitlines():
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                torn += 1
                continue
            if isinstance(entry, dict):
                entries.append(entry)
        return entries, torn

    def messages(self, session_id: str) -> list[dict[str, Any]]:
        """The live message list, as the agent had it: every message entry in order, with each
        compaction replacing everything before its kept tail by the summary message."""
        live: list[dict[str, Any]] = []
        for entry in self.entries(session_id):
            kind = entry.get("kind")
            if kind == "message" and isinstance(entry.get("message"), dict):
                live.append(entry["message"])
            elif kind == "compaction" and isinstance(entry.get("summary"), str):
                first_kept = max(0, len(live) - int(entry.get("kept", 0)))
                live = [summary_message(entry["summary"]), *live[first_kept:]]
            elif kind == "drop":  # the oldest turns left the context (shell.window_fit)
                head = live[:1] if entry.get("summary_kept") else []
                first_kept = max(len(head), len(live) - int(entry.get("kept", 0)))
                live = [*head, *live[first_kept:]]
        return live

    def transcript_bytes(self, session_id: str) -> int:
        """Size of the transcript on disk (the flush gate's size trigger)."""
        try:
            return self._transcript_path(session_id).stat().st_size
        except FileNotFoundError:
            return 0


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"

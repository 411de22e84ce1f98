"""Sessions that survive restarts and crashes: a counters record and an append-only transcript.

Under `<state_dir>/sessions/` each session has two files:

- `<id>.json`, the `SessionRecord` (turns, compaction and flush counters, token totals), always
  replaced atomically (temp file, fsync, rename), so a crash leaves the old or the new record;
  one that still cannot be read (a disk's fault, a hand's edit) is rebuilt from the transcript;
- `<id>.jsonl`, the transcript: one JSON entry per line, fsynced after each append. The full
  history stays on disk; `messages()` rebuilds the live message list from it, applying each
  compaction entry and answering each tool call a kill left without a result (`repair.py`). A
  line torn by a crash mid-write is skipped.

Both go through `shell.secrets.door`: redacted, 0600 in a 0700 folder.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import secrets
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from shell.secrets.door import open_private, private_folder, redacted, write_private
from shell.session.encodable import escaped_json
from shell.session.record import FlushCycle, SessionRecord
from shell.session.repair import Replayed, mended, replay
from shell.session.views import ViewLog


class SessionNotFound(LookupError):
    """No session with that id under the state directory."""


class SessionUnrecoverable(SessionNotFound):
    """A session whose record and transcript both cannot be read: nothing to resume."""


SESSION_ID = re.compile(r"\d{8}-\d{6}-[0-9A-Za-z]+")
"""What `SessionStore.create` names a session; any other file in the folder is not one."""


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
        self._rebuilt_notes: dict[str, list[str]] = {}
        self.views = ViewLog(self.folder)
        """`<id>.events.jsonl`: what each session showed, for a resumed view (`views.py`)."""

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
        private_folder(self.folder)
        open_private(self._transcript_path(session_id), "ab").close()
        self.save(record, touch=False)
        return record

    def load(self, session_id: str) -> SessionRecord:
        """Read a session's record; one that is missing or unreadable (truncated, a field of a
        wrong type) is rebuilt from the transcript, the bad file kept aside, and said
        (`opening_notices`).

        Raises:
            SessionNotFound: when there is no such session.
            SessionUnrecoverable: when neither its record nor its transcript can be read.
        """
        path = self._record_path(session_id)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            if not self._transcript_path(session_id).exists():
                raise SessionNotFound(f"no session {session_id!r} in {self.folder}") from None
            return self._rebuilt(session_id, "its record is missing")
        try:
            return SessionRecord.from_dict(json.loads(raw))
        except (ValueError, UnicodeDecodeError) as error:  # JSONDecodeError is a ValueError
            return self._rebuilt(session_id, f"its record is unreadable: {error}", corrupt=path)

    def has(self, session_id: str) -> bool:
        """Whether this machine holds the session (its record or its transcript)."""
        return SESSION_ID.fullmatch(session_id) is not None and (
            self._record_path(session_id).exists() or self._transcript_path(session_id).exists()
        )

    def opened(self, session_id: str | None, *, resume: bool) -> SessionRecord | None:
        """The session a start opens: `session_id`, else the latest when `resume`; None for a
        new one.

        Raises:
            SessionNotFound: `session_id` names no session here.
            SessionUnrecoverable: the session can be read neither from its record nor from
                its transcript.
        """
        if session_id:
            return self.load(session_id)
        return self.latest() if resume else None

    def latest(self) -> SessionRecord | None:
        """The most recently updated session, or None when there is none. One whose record
        cannot be read counts from its transcript's last change, and is rebuilt by `load`.

        Raises:
            SessionUnrecoverable: the latest session can be read neither from its record nor
                from its transcript (`--resume` says so rather than start another).
        """
        stems = {p.name.split(".", 1)[0] for p in self.folder.glob("*.json*")}
        ranked = [(self._updated(stem), stem) for stem in filter(SESSION_ID.fullmatch, stems)]
        if not ranked:
            return None
        return self.load(max(ranked)[1])

    def opening_notices(self, session_id: str) -> list[str]:
        """What opening a resumed session had to mend: a record rebuilt, tool calls a kill left
        without a result (answered in the live messages, `shell.session.repair`)."""
        return [*self._rebuilt_notes.get(session_id, []), *mended(self.replayed(session_id))]

    def _updated(self, session_id: str) -> str:
        """A session's `updated_at`; its files' last change when its record cannot be read."""
        try:
            raw = self._record_path(session_id).read_bytes()
            return SessionRecord.from_dict(json.loads(raw)).updated_at
        except (OSError, ValueError, UnicodeDecodeError):
            return self._changed(session_id)

    def _changed(self, session_id: str) -> str:
        """When a session's files last changed, as a record's `updated_at` says it."""
        times = []
        for path in (self._transcript_path(session_id), self._record_path(session_id)):
            with contextlib.suppress(OSError):
                times.append(path.stat().st_mtime)
        when = datetime.fromtimestamp(max(times, default=0), tz=self._clock().tzinfo)
        return when.isoformat(timespec="seconds")

    def _rebuilt(self, session_id: str, why: str, *, corrupt: Path | None = None) -> SessionRecord:
        entries, torn = self._read(session_id)
        if not self._transcript_path(session_id).exists() or (torn and not entries):
            state = "holds no readable line" if torn else "is missing"
            raise SessionUnrecoverable(
                f"session {session_id} cannot be resumed: {why}, and its transcript {state}; "
                "run without --resume for a new session, or name another with --session"
            )
        messages = [e.get("message") for e in entries if e.get("kind") == "message"]
        turns = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "user")
        compactions = sum(1 for e in entries if e.get("kind") == "compaction")
        created = _created(session_id, self._clock()) or self._changed(session_id)
        record = SessionRecord(
            session_id,
            created,
            self._now(),
            "unknown",
            turns=turns,
            cycle=FlushCycle(compactions=compactions),
            needs_prelude=not messages,
        )
        kept = ""
        if corrupt is not None:
            aside = corrupt.with_name(f"{corrupt.name}.corrupt")
            os.replace(corrupt, aside)
            kept = f"; the unreadable file is kept as {aside.name}"
        self.save(record, touch=False)
        self._rebuilt_notes[session_id] = [
            f"Session {session_id}: {why}. Rebuilt from its transcript: {turns} turn(s), "
            f"{compactions} compaction(s); its token totals and flush cycle start again{kept}."
        ]
        return record

    def save(self, record: SessionRecord, *, touch: bool = True) -> None:
        """Write the record atomically: temp file, fsync, rename over the old one."""
        if touch:
            record.updated_at = self._now()
        path = self._record_path(record.session_id)
        data = json.dumps(redacted(dataclasses.asdict(record)), indent=2, ensure_ascii=False)
        data = escaped_json(data)
        write_private(path, data + "\n")

    def append(self, session_id: str, entry: dict[str, Any]) -> None:
        """Append one transcript entry as a JSON line, flushed and fsynced.

        Entries: `{"kind": "message", "message": {...}}`, a `compaction_entry(...)`, or
        `{"kind": "event", ...}` (ignored when rebuilding messages). Secrets in it are redacted
        (`shell.secrets.door.redacted`): nothing detected as one is written to disk.
        """
        path = self._transcript_path(session_id)
        private_folder(self.folder)
        entry = redacted(entry)  # what the user typed stays in the live context, not on disk
        line = escaped_json(json.dumps(entry, ensure_ascii=False, default=str)) + "\n"
        with open_private(path, "ab") as handle:
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
        """The live message list, as the agent had it (`shell.session.repair.replay`): each
        compaction applied, each round of tool calls answered in full."""
        return self.replayed(session_id).messages

    def replayed(self, session_id: str) -> Replayed:
        """The transcript read back: the live messages, and what a cut round left unanswered."""
        return replay(self.entries(session_id))

    def transcript_bytes(self, session_id: str) -> int:
        """Size of the transcript on disk (the flush gate's size trigger)."""
        try:
            return self._transcript_path(session_id).stat().st_size
        except FileNotFoundError:
            return 0


def _created(session_id: str, now: datetime) -> str | None:
    """When a session began, from its id (`create` names it by the clock's time)."""
    try:
        stamp = datetime.strptime(session_id[:15], "%Y%m%d-%H%M%S")
    except ValueError:
        return None
    return stamp.replace(tzinfo=now.tzinfo).isoformat(timespec="seconds")


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"

"""What a session showed, kept so a resumed session can show it again.

Beside a session's record and transcript (`store.py`), `<id>.events.jsonl` holds the events its
streams yielded, one JSON line each (`shell.events.from_json` reads it back), appended as they
pass: a resumed TUI plays them back before the live ones, so the transcript, its cards and
receipts, the compaction counter and the gate log come back as they were. The recording sits
in the core (`ViewRecorder`), so headless runs leave the same log.

- Only what the view keeps is recorded: not the streamed text deltas (the complete
  `AssistantMessage` follows them), nor the passing state of the moment (usage, loading, index
  progress), which the live session reports again.
- Lines are written by one thread for every log (`record`): redacting and writing never hold
  up the event loop, the lines land in order, and a read waits for the writes queued before it.
- Each line is flushed as it is written, not fsynced: this is a view, not memory, and a torn last
  line (a crash mid-write) is skipped on reading, as is a line of an event type this version does
  not know.
- The log is bounded: past `MAX_BYTES` it is rewritten with only its newer half (cut at a turn
  boundary), after a notice that earlier turns are not shown and the last compaction receipt of
  the cut part, so the compaction counter stays right.
- Nothing detected as a secret is written (`shell.secrets.door.event_line`, as for the
  session file and a trace): a resumed view shows a secret the user typed redacted. The log is
  0600 in a 0700 folder.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import weakref
from collections.abc import AsyncGenerator, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

from shell.events import (
    CompactionFinished,
    Event,
    IndexSynced,
    IndexSyncProgress,
    Loading,
    Notice,
    TextDelta,
    TurnStarted,
    UsageUpdated,
    from_json,
)
from shell.secrets.door import event_line, open_private, private_folder, write_private
from shell.session.encodable import escaped_json

MAX_BYTES = 1024 * 1024
"""A log larger than this keeps only its newer half (a demo turn takes 2–4 KB: a few hundred
turns fit)."""
CUT_NOTICE = "earlier turns of this session are not shown: its kept view is bounded"
PASSING = (TextDelta, Loading, UsageUpdated, IndexSyncProgress, IndexSynced)
"""Events the log leaves out: repeated by a complete event, or reported again when resumed."""
_WRITER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cairn-view-log")
"""The one thread that writes every view log (redacting a long answer takes milliseconds); at
exit Python waits for the lines it has queued."""


class ViewLog:
    """The `<id>.events.jsonl` files under a session folder."""

    def __init__(self, folder: Path, *, max_bytes: int = MAX_BYTES) -> None:
        self.folder = folder
        self.max_bytes = max_bytes

    def path(self, session_id: str) -> Path:
        return self.folder / f"{session_id}.events.jsonl"

    def record(self, session_id: str, event: Event) -> None:
        """`append` on the writer thread; a view that cannot be kept (a full disk) is dropped
        without a word: it must not stop a turn, and the memory is elsewhere."""
        if not isinstance(event, PASSING):
            _WRITER.submit(self._append_quietly, session_id, event)

    def _append_quietly(self, session_id: str, event: Event) -> None:
        with contextlib.suppress(OSError):
            self.append(session_id, event)

    def append(self, session_id: str, event: Event) -> None:
        """Add one event (unless it is a passing one), then trim the log if it grew too big."""
        if isinstance(event, PASSING):
            return
        path = self.path(session_id)
        private_folder(self.folder)
        line = (escaped_json(event_line(event)) + "\n").encode("utf-8")  # no secret on disk
        with open_private(path, "ab") as handle:
            size = handle.seek(0, os.SEEK_END)
            if size and _last_byte(path) != b"\n":
                line = b"\n" + line  # a torn line must not swallow this one
            handle.write(line)
            size += len(line)
        if size > self.max_bytes:
            self._trim(path)

    def read(self, session_id: str) -> list[Event]:
        """Every readable event, in order, once the writes queued before are done; torn or
        unknown lines are skipped."""
        return _WRITER.submit(self._read, session_id).result()

    def _read(self, session_id: str) -> list[Event]:
        try:
            raw = self.path(session_id).read_bytes()
        except FileNotFoundError:
            return []
        return [event for _, event in _parse(raw.splitlines())]

    def _trim(self, path: Path) -> None:
        lines = path.read_bytes().splitlines()
        events = _parse(lines)
        budget, cut = self.max_bytes // 2, len(lines)
        for index in range(len(lines) - 1, -1, -1):  # the oldest line of the newer half
            budget -= len(lines[index]) + 1
            if budget < 0:
                break
            cut = index
        starts = [i for i, event in events if isinstance(event, TurnStarted)]
        cut = next((i for i in starts if i >= cut), cut)
        dropped = [event for i, event in events if i < cut]
        head: list[Event] = [Notice(CUT_NOTICE)]
        if receipts := [e for e in dropped if isinstance(e, CompactionFinished)]:
            head.append(receipts[-1])
        kept = [escaped_json(event_line(event)).encode("utf-8") for event in head] + lines[cut:]
        write_private(path, b"\n".join(kept) + b"\n")


def _parse(lines: list[bytes]) -> list[tuple[int, Event]]:
    events = []
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            events.append((index, from_json(line.decode("utf-8"))))
        except (ValueError, TypeError, UnicodeDecodeError):  # torn, or a type since removed
            continue
    return events


def _last_byte(path: Path) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1)


class _Store(Protocol):
    @property
    def views(self) -> ViewLog: ...


class _Session(Protocol):
    @property
    def session_id(self) -> str: ...

    @property
    def sessions(self) -> _Store: ...


class _Recorded(Protocol):
    """What a `ViewRecorder` subclass has (`shell.agent.Agent`): its conversation, whether it
    was resumed."""

    @property
    def conversation(self) -> _Session: ...

    @property
    def _resumed(self) -> bool: ...

    def _record_view(self, event: Event) -> None: ...


_RECORDING: weakref.WeakSet[asyncio.Task[Any]] = weakref.WeakSet()
"""Tasks inside a recorded stream: a stream that runs another (`/dream` runs `dream`) is
recorded once, by the outer one."""


class ViewRecorder:
    """Records what the named streams of a subclass yield in its session's `ViewLog`, and gives
    it back as `history()`:

        class Agent(ViewRecorder, records=("start", "submit")): ...
    """

    def __init_subclass__(cls, *, records: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in records:
            setattr(cls, name, _recorded(getattr(cls, name)))

    def history(self: _Recorded) -> list[Event]:
        """What this session showed before it was resumed; nothing for a new session.
        Blocking (it reads a file): call it off the event loop."""
        if not self._resumed:
            return []
        return self.conversation.sessions.views.read(self.conversation.session_id)

    def _record_view(self: _Recorded, event: Event) -> None:
        self.conversation.sessions.views.record(self.conversation.session_id, event)


def _recorded(
    stream: Callable[..., AsyncGenerator[Event]],
) -> Callable[..., AsyncGenerator[Event]]:
    @functools.wraps(stream)
    async def recording(self: _Recorded, *args: Any, **kwargs: Any) -> AsyncGenerator[Event]:
        task = asyncio.current_task()
        outer = task is not None and task not in _RECORDING
        if task is not None and outer:
            _RECORDING.add(task)
        try:
            async with contextlib.aclosing(stream(self, *args, **kwargs)) as events:
                async for event in events:
                    if outer:
                        self._record_view(event)
                    yield event
        finally:
            if outer and task is not None:
                _RECORDING.discard(task)

    return recording

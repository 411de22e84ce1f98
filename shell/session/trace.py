"""A trace: every event a front end saw, one JSON line each, for `cairn replay` and for bugs.

Both front ends write it the same way (the TUI's `--trace`, `cairn run --trace`): redacted like
every event file on disk (`shell.secrets.door.event_line`), so a token typed in a prompt never
reaches it, 0600, and flushed line by line, so a crash keeps what came before.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

from shell.events import Event
from shell.secrets.door import event_line, open_private
from shell.session.encodable import escaped_json


class TraceWriter:
    """Appends events to the trace file at `path` (its folder made if missing)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._file: IO[str] | None = open_private(path, "a")

    def write(self, event: Event) -> None:
        if self._file is None:
            return
        self._file.write(escaped_json(event_line(event)) + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

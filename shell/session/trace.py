"""A trace: every event a front end saw, one JSON line each, for `cairn replay` and for bugs.

Both front ends write it the same way (the TUI's `--trace`, `cairn run --trace`): redacted like
every event file on disk (`shell.secrets.detect.redacted_json`), so a token typed in a prompt
never reaches it, and flushed line by line, so a crash keeps what came before.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

from shell.events import Event
from shell.secrets.detect import redacted_json


class TraceWriter:
    """Appends events to the trace file at `path` (its folder made if missing)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._file: IO[str] | None = path.open("a", encoding="utf-8")

    def write(self, event: Event) -> None:
        if self._file is None:
            return
        self._file.write(redacted_json(event) + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

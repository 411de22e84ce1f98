"""Whole outputs kept beside the transcript, so a cut result can be read on.

A tool result too big for the context is cut before it enters the transcript
(`shell.tools.fitting`), and a command's output is spooled as it streams; either way the whole
text is kept here, under the call's id, and `read_output(ref="output:<call id>", from, lines)`
reads it on (so does `read_file` with the same ref, when the project tools are offered). The
files live in the workspace's git-ignored state folder and are pruned to the newest `KEEP`.
"""

from __future__ import annotations

import re
from pathlib import Path

from shell.tools.toolbox import ToolError
from shell.tools.window import Window, window

PREFIX = "output:"
KEEP = 50
_SAFE_ID = re.compile(r"[^A-Za-z0-9_.-]")


class OutputStore:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, call_id: str) -> Path:
        """Where the whole output of `call_id` is kept (the folder is made on demand)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        return self.folder / f"{_SAFE_ID.sub('_', call_id) or 'call'}.txt"

    @staticmethod
    def ref(call_id: str) -> str:
        """How the model names the kept output: "output:<call id>"."""
        return f"{PREFIX}{call_id}"

    def keep(self, call_id: str, text: str) -> str:
        """Keep `text` (unless the call spooled its output already) and return its ref."""
        path = self.path(call_id)
        if not path.exists():
            path.write_text(text, encoding="utf-8")
        self.prune()
        return self.ref(call_id)

    def find(self, ref: str) -> Path:
        """The file of an "output:<call id>" ref.

        Raises:
            ToolError: no output is kept under that id.
        """
        call_id = ref.removeprefix(PREFIX).strip()
        path = self.folder / f"{_SAFE_ID.sub('_', call_id)}.txt"
        if not call_id or not path.is_file():
            raise ToolError(f"no output is kept as {ref!r} (outputs are kept for recent calls)")
        return path

    def read(self, ref: str, from_line: int, count: int, max_chars: int) -> Window:
        """A window of the output kept as `ref` (see `shell.tools.window`).

        Raises:
            ToolError: no output is kept under that id.
        """
        data = self.find(ref).read_bytes()
        return window(data.decode("utf-8", errors="replace"), from_line, count, max_chars)

    def prune(self) -> None:
        files = sorted(self.folder.glob("*.txt"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in files[KEEP:]:
            old.unlink(missing_ok=True)

"""Live views of the memory files: MEMORY.md, today's daily note, DREAMS.md.

Each pane re-reads its file when a memory_written event names it, and polls the file's mtime
every couple of seconds so edits made in an editor show up too.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Markdown

MAX_PANE_BYTES = 256 * 1024
"""Larger files are shown truncated (the tail is what changes, so the tail is kept)."""


def read_for_pane(path: Path) -> str:
    """The file's text as the pane shows it (a note when missing, the tail when huge)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return f"*{path.name} does not exist yet.*"
    except OSError as error:
        return f"*{path.name} could not be read: {error.strerror or error}*"
    if len(data) > MAX_PANE_BYTES:
        data = data[-MAX_PANE_BYTES:]
        prefix = f"*… showing the last {MAX_PANE_BYTES // 1024} KiB*\n\n"
    else:
        prefix = ""
    return prefix + data.decode("utf-8", errors="replace")


class MemoryFilePane(VerticalScroll):
    """One memory file rendered as Markdown; `path_of()` is asked each time, so the daily note
    follows the date."""

    DEFAULT_CSS = """
    MemoryFilePane { height: 1fr; padding: 0 1; }
    MemoryFilePane > Markdown { margin: 0; padding: 0; background: transparent; }
    """

    def __init__(self, path_of: Callable[[], Path], *, id: str | None = None) -> None:
        super().__init__(id=id, can_focus=False)
        self.path_of = path_of
        self._signature: tuple[Path, float, int] | None = None
        self.text = ""

    def compose(self) -> ComposeResult:
        yield Markdown("")

    async def on_mount(self) -> None:
        await self.reload(force=True)

    @property
    def path(self) -> Path:
        return self.path_of()

    def _current_signature(self) -> tuple[Path, float, int]:
        path = self.path
        try:
            stat = path.stat()
        except OSError:
            return (path, -1.0, -1)
        return (path, stat.st_mtime, stat.st_size)

    async def reload(self, *, force: bool = False) -> bool:
        """Re-read the file if it changed (or always, with `force`). Returns True if re-read."""
        signature = self._current_signature()
        if not force and signature == self._signature:
            return False
        self._signature = signature
        self.text = read_for_pane(signature[0])
        await self.query_one(Markdown).update(self.text)
        return True

    def shows(self, path: Path) -> bool:
        """Whether this pane displays `path` (absolute, or relative to the workspace)."""
        try:
            return path.resolve() == self.path.resolve()
        except OSError:
            return False

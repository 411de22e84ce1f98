"""Live views of the memory files: MEMORY.md, today's daily note, DREAMS.md.

Each pane re-reads its file when a memory_written event names it (the core's file watcher
reports an edit made in an editor as one too), and when the index says files changed; while no
watcher runs (before the first index sync, `Settings.watch` off, a replay) the side panes poll
the files' mtimes.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import VerticalScroll

from widgets.panes.follow import follow_end

if TYPE_CHECKING:
    from widgets.cards.prose import Prose

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


def written_lines(before: str, after: str, added: int) -> set[int]:
    """The 0-based lines of `after` that a write changed: those not in `before`, or (when the
    pane had already shown the new text) the last `added` non-blank lines, as appends land at
    the end."""
    old, new = before.splitlines(), after.splitlines()
    changed: set[int] = set()
    if before:
        matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
        for tag, _, _, start, end in matcher.get_opcodes():
            if tag in ("insert", "replace"):
                changed.update(i for i in range(start, end) if new[i].strip())
    if not changed and added > 0:
        filled = [i for i, line in enumerate(new) if line.strip()]
        changed.update(filled[-added:])
    return changed


class MemoryFilePane(VerticalScroll):
    """One memory file rendered as Markdown; `path_of()` is asked each time, so the daily note
    follows the date."""

    DEFAULT_CSS = """
    MemoryFilePane { height: 1fr; padding: 0 1; }
    MemoryFilePane > Prose { margin: 0; padding: 0; background: transparent; }
    """

    def __init__(self, path_of: Callable[[], Path], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.path_of = path_of
        self._signature: tuple[Path, float, int] | None = None
        self.text = ""
        self.written: set[str] = set()
        """The lines (stripped) of the last write Cairn made to this file, highlighted wherever
        they are now (an edit made outside Cairn may move them)."""

    def compose(self) -> ComposeResult:
        # Markdown costs 35 ms of imports: the panes mount after the first frame (`SidePanes`),
        # so it is loaded then, not before that frame.
        from widgets.cards.prose import Prose

        yield Prose("")

    async def on_mount(self) -> None:
        await self.reload(force=True)

    def on_resize(self) -> None:
        follow_end(self)  # new notes land at the end: follow them until the user scrolls up

    def watch_virtual_size(self) -> None:
        self.call_later(follow_end, self)  # a full reflow sends no Resize for content alone

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
        if self._signature is not None and signature[0] != self._signature[0]:
            self.written = set()  # the daily note moved on to a new date
        self._signature = signature
        self.text = read_for_pane(signature[0])
        self._prose.update(self.text)
        self._mark_written()
        return True

    async def show_write(self, lines_added: int) -> None:
        """Cairn wrote this file: re-read it and highlight the lines the write added."""
        before = self.text
        await self.reload(force=True)
        lines = self.text.splitlines()
        self.written = {lines[i].strip() for i in written_lines(before, self.text, lines_added)}
        self._mark_written()

    @property
    def _prose(self) -> Prose:
        from widgets.cards.prose import Prose

        return self.query_one(Prose)

    def _mark_written(self) -> None:
        """Highlight each block whose lines were all written (a list item, not its list)."""
        self._prose.mark_written(frozenset(self.written))

    def shows(self, path: Path) -> bool:
        """Whether this pane displays `path` (absolute, or relative to the workspace)."""
        try:
            return path.resolve() == self.path.resolve()
        except OSError:
            return False

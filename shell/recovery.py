"""What a kill left half done in a workspace, finished or undone at the next start, each said.

Every command that changes memory runs this first (`cairn run` and the TUI at their start,
`cairn dream`, `cairn revert`, `cairn sync`), so no command builds on a half state.
"""

from __future__ import annotations

from pathlib import Path

from shell.events import Event
from shell.git.history import MemoryHistory
from shell.git.store import GitStore
from shell.memory.files.commits import recover


def recover_interrupted(root: Path, git: GitStore) -> list[Event]:
    """Cairn's own writes a kill left uncommitted are committed (a change of several files only
    when all of them were written, else undone); a revert cut before its commit is undone."""
    return [*recover(root, git), *MemoryHistory(git).recover()]

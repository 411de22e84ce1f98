"""The memory the side panes show: a session's own (its project's when one is open)."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from widgets.panes.git_log import GitLogSource


class OwnMemory(Protocol):
    """A session's own memory as the panes see it: its folder, its label, its history."""

    @property
    def root(self) -> Path: ...

    @property
    def scope(self) -> str: ...

    @property
    def git(self) -> GitLogSource | None: ...

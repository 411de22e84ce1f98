"""The doors of a session's scopes: a write goes through its own scope's one door."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from shell.memory.files.door import MemoryFiles
from shell.scopes.scopes import GLOBAL, Scope, Scopes


@dataclass(frozen=True)
class ScopedDoors:
    """The memory files of each scope a session may write, by scope label."""

    scopes: Scopes
    doors: Mapping[str, MemoryFiles]

    @classmethod
    def single(cls, files: MemoryFiles) -> ScopedDoors:
        """One workspace, no project: every write is global, as before scopes."""
        scope = Scope(GLOBAL, GLOBAL, files.root)
        return cls(Scopes(own=scope, user=scope), {GLOBAL: files})

    @property
    def own(self) -> MemoryFiles:
        return self.doors[self.scopes.own.label]

    @property
    def scoped(self) -> bool:
        """Whether the session has more than the global memory (a project is open)."""
        return self.scopes.project is not None

    def door(self, name: str | None) -> tuple[Scope, MemoryFiles]:
        """The scope a write or read names ("user", "project"; None: the own) and its door.

        Raises:
            ScopeError: not a scope of this session.
        """
        scope = self.scopes.for_write(name)
        return scope, self.doors[scope.label]

"""What the TUI needs from an agent: the shape `shell.agent.Agent` has, as a Protocol, so the
app also runs a recorded trace (`widgets.replay`) or a test's scripted fake."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Protocol

from shell.events import Event
from widgets.git_log import GitLogSource


class SettingsLike(Protocol):
    @property
    def workspace(self) -> Path: ...

    @property
    def model(self) -> str: ...

    @property
    def demo(self) -> bool: ...

    def today(self) -> str: ...


class BudgetLike(Protocol):
    @property
    def window(self) -> int: ...

    @property
    def flush_threshold(self) -> int: ...

    @property
    def compaction_threshold(self) -> int: ...


class AgentSource(Protocol):
    @property
    def settings(self) -> SettingsLike: ...

    @property
    def budget(self) -> BudgetLike: ...

    @property
    def session_id(self) -> str: ...

    @property
    def git(self) -> GitLogSource | None: ...

    def start(self) -> AsyncIterator[Event]: ...

    def submit(self, text: str) -> AsyncIterator[Event]: ...

    def background_events(self) -> AsyncIterator[Event]:
        """Events between turns (index sync, file watching), for as long as the app runs."""
        ...

    async def aclose(self) -> None: ...

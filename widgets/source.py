"""What the TUI needs from an agent: the shape `shell.agent.Agent` has, as a Protocol, so the
app also runs a recorded trace (`widgets.replay`) or a test's scripted fake."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Protocol

from shell.events import BaseEvent
from widgets.git_log import GitLogSource


class SettingsLike(Protocol):
    workspace: Path
    model: str

    @property
    def demo(self) -> bool: ...

    def today(self) -> str: ...


class BudgetLike(Protocol):
    window: int

    @property
    def flush_threshold(self) -> int: ...

    @property
    def compaction_threshold(self) -> int: ...


class AgentSource(Protocol):
    settings: SettingsLike
    budget: BudgetLike
    session_id: str
    git: GitLogSource | None

    def start(self) -> AsyncIterator[BaseEvent]: ...

    def submit(self, text: str) -> AsyncIterator[BaseEvent]: ...

    async def aclose(self) -> None: ...

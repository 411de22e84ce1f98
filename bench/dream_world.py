"""A workspace to dream in for `bench.dream --real`: the product's parts, on a clock it moves.

`World` is a fresh workspace (`init_workspace`: real git, the seeded files), its `RecallService`
(the real index with the settings' embedder, the hit log) and a `Dreamer` without a model, as an
offline `cairn dream` runs. Notes are committed on the day they were written (`commit_note`), so
git blame dates them as a person's notes would be; questions go through the `memory_search` tool
itself (`ask`), so the hit log records what the product records; a sweep is timed from outside
(`sweep`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.dream_setup import Clock
from shell.config import DreamSettings, Settings
from shell.dreaming import Dreamer
from shell.events import (
    DreamProposed,
    DreamSweepFinished,
    DreamSweepSkipped,
    Error,
    Event,
    Proposal,
)
from shell.git.store import GitStore
from shell.memory.files.door import MemoryFiles
from shell.memory.service import RecallService
from shell.tools.toolbox import CallContext, ToolError
from shell.workspace import init_workspace

WINDOW = 8192
"""The context window the sweeps and the review are given (as `bench.dream`)."""


@dataclass
class Swept:
    """One sweep seen from outside: what it proposed, how long it took, how it ended."""

    proposals: list[Proposal]
    seconds: float
    finished: DreamSweepFinished | None
    skipped: DreamSweepSkipped | None


@dataclass
class World:
    root: Path
    clock: Clock
    settings: Settings
    git: GitStore
    files: MemoryFiles
    recall: RecallService
    dreamer: Dreamer
    failed_questions: list[str] = field(default_factory=list)

    def commit_note(self, path: str, lines: Sequence[str], at: datetime, message: str) -> None:
        """Write a note (or MEMORY.md) whole and commit it dated `at`."""
        self.clock.now = at
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("\n".join(lines) + "\n", encoding="utf-8")
        outcome = self.git.commit([path], message)
        if outcome.error:
            raise RuntimeError(f"could not commit {path}: {outcome.error}")

    def index(self) -> float:
        """Sync the index; its seconds."""
        started = time.perf_counter()
        for event in self.recall.sync("manual"):
            if isinstance(event, Error):
                raise RuntimeError(f"indexing failed: {event}")
        return time.perf_counter() - started

    def ask(self, schedule: Sequence[tuple[datetime, str]]) -> None:
        """Each question through the `memory_search` tool, the clock at its time, in order."""
        tool = self.recall.tool()

        async def run() -> None:
            for when, question in schedule:
                self.clock.now = when
                try:
                    await tool.run({"query": question}, CallContext())
                except ToolError:
                    self.failed_questions.append(question)

        asyncio.run(run())

    def sweep(self) -> Swept:
        async def run() -> list[Event]:
            return [event async for event in self.dreamer.sweep("cli", window=WINDOW)]

        started = time.perf_counter()
        events = asyncio.run(run())
        seconds = time.perf_counter() - started
        return Swept(
            [e.proposal for e in events if isinstance(e, DreamProposed)],
            seconds,
            next((e for e in events if isinstance(e, DreamSweepFinished)), None),
            next((e for e in events if isinstance(e, DreamSweepSkipped)), None),
        )

    def close(self) -> None:
        self.recall.index.close()


def make_world(root: Path, at: datetime, **dreaming: Any) -> World:
    """A fresh workspace at `root`, seeded and committed at `at`; `dreaming`: `[dreaming]`
    settings other than the defaults."""
    clock = Clock(at)
    settings = Settings(
        workspace=root, watch=False, clock=clock, dreaming=DreamSettings(**dreaming)
    )
    git = init_workspace(settings)
    files = MemoryFiles(root, git)
    recall = RecallService(settings)
    dreamer = Dreamer(settings, files=files, git=git, recall=recall, llm=None)
    return World(root, clock, settings, git, files, recall, dreamer)

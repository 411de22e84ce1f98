"""A scripted stand-in for shell.agent.Agent, for the states the demo brain cannot reach on cue:
the same methods, canned events, each checked against the core's types (a JSON round trip
through `shell.events`, which refuses a value outside its `Literal`).

A script step is an event (yielded), a callable (run, e.g. to write a workspace file before its
memory_written event), or an `asyncio.Event` (awaited: a turn that blocks until the test says so,
or forever, to be cancelled).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from shell.config import Settings
from shell.context.budget import ContextBudget
from shell.events import BaseEvent, from_json, to_json
from widgets.replay import ReplayMemory

FIXED_NOW = datetime(2026, 5, 1, 9, 30, tzinfo=UTC)
TODAY = "2026-05-01"
SESSION_ID = "s-0001"

Step = BaseEvent | Callable[[], None] | asyncio.Event


@dataclass(frozen=True)
class FakeCommit:
    sha: str
    short: str
    message: str
    when: datetime
    files: tuple[str, ...] = ()
    machine: str = ""


@dataclass
class FakeGit:
    commits: list[FakeCommit] = field(default_factory=list)

    def commit(self, sha: str, message: str, *files: str) -> None:
        self.commits.insert(0, FakeCommit(sha, sha[:7], message, FIXED_NOW, files))

    def log(self, limit: int = 20) -> list[FakeCommit]:
        return self.commits[:limit]


def fake_settings(workspace: Path, *, model: str = "cairn-demo/brain") -> Settings:
    return Settings(workspace=workspace, model=model, clock=lambda: FIXED_NOW)


class FakeAgent:
    """Plays `start_script` on start() and `turns[text]` on submit(text)."""

    playback = None

    def __init__(
        self,
        workspace: Path,
        *,
        start_script: Sequence[Step] = (),
        turns: Mapping[str, Sequence[Step]] | None = None,
        window: int = 8192,
        model: str = "cairn-demo/brain",
    ) -> None:
        self.settings = fake_settings(workspace, model=model)
        self.budget = ContextBudget(window=window)
        self.session_id = SESSION_ID
        self.git = FakeGit()
        self.own = ReplayMemory(workspace, "global", self.git)
        self.start_script = list(start_script)
        self.turns = dict(turns or {})
        self.submitted: list[str] = []
        self.proposals: list[object] = []
        """What `open_proposals` gives (previews a real `Dreamer` made, for snapshots)."""
        self.past: list[BaseEvent] = []
        """What `history()` gives: a resumed session's earlier view."""
        self.closed_streams = 0
        self.aclosed = False
        self.answers: list[tuple[str, str, str]] = []
        """What `answer_approval` was given: (call id, choice, reason)."""

    async def _play(self, steps: Sequence[Step]) -> AsyncIterator[BaseEvent]:
        try:
            for step in steps:
                if isinstance(step, BaseEvent):
                    assert from_json(to_json(step)) == step, f"not a core event: {step!r}"
                    yield step
                elif isinstance(step, asyncio.Event):
                    await step.wait()
                else:
                    step()
                await asyncio.sleep(0)
        finally:
            self.closed_streams += 1

    def history(self) -> list[BaseEvent]:
        return list(self.past)

    def start(self) -> AsyncIterator[BaseEvent]:
        return self._play(self.start_script)

    def submit(self, text: str) -> AsyncIterator[BaseEvent]:
        self.submitted.append(text)
        return self._play(self.turns.get(text, ()))

    def cancel(self) -> bool:
        return False  # a script cannot stop cooperatively: the app cancels its worker

    def answer_approval(self, call_id: str, choice: str, reason: str = "") -> bool:
        self.answers.append((call_id, choice, reason))
        return True

    async def background_events(self) -> AsyncIterator[BaseEvent]:
        for event in ():
            yield event

    def dream(self, trigger: str = "manual") -> AsyncIterator[BaseEvent]:
        return self.submit("/dream")

    def decide(self, decision: object) -> AsyncIterator[BaseEvent]:
        return self._play(())

    def open_proposals(self) -> list[object]:
        return list(self.proposals)

    def edited_by_user(self, path: str) -> AsyncIterator[BaseEvent]:
        return self._play(())

    async def aclose(self) -> None:
        self.aclosed = True

"""A workspace to dream in: real memory files, git, the index (hash embedder) and hit log, and a
clock tests move, so recalls can be planted on chosen days with chosen scores."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any

from shell.config import DEMO_MODEL, DreamSettings, Settings
from shell.dreaming import Dreamer
from shell.events import DeepSleepFinished, Event, Stopped
from shell.git.store import GitStore
from shell.memory.files.door import MemoryFiles
from shell.memory.search.result import SearchHit
from shell.memory.service import RecallService
from shell.model import LLM
from shell.workspace import init_workspace
from tests.conftest import FIXED_NOW, Clock

WINDOW = 4096
TODAY = FIXED_NOW.date().isoformat()
FOUR = [
    "how does Tom take his coffee?",
    "what coffee does Tom drink?",
    "milk for Tom?",
    "Tom's order?",
]
"""Four differently worded questions about one fact."""


class DreamWorld:
    """One workspace with dreaming, and helpers to write notes and plant recalls."""

    def __init__(
        self,
        root: Path,
        clock: Clock,
        *,
        llm: LLM | None = None,
        settings: Settings | None = None,
        embedder: str = "hash",
        **dreaming: Any,
    ) -> None:
        """`embedder` "minilm" where what is alike must be alike in meaning (updates)."""
        self.clock = clock
        base = settings or Settings(
            workspace=root, model=DEMO_MODEL, embedder=embedder, watch=False, clock=clock
        )
        self.settings = replace(base, workspace=root, dreaming=replace(base.dreaming, **dreaming))
        init_workspace(self.settings)
        self.git = GitStore(self.settings.workspace, clock=clock)  # commits dated by the clock
        self.files = MemoryFiles(self.settings.workspace, self.git)
        self.recall = RecallService(self.settings)
        self.dreamer = Dreamer(
            self.settings, files=self.files, git=self.git, recall=self.recall, llm=llm
        )

    @property
    def root(self) -> Path:
        return self.settings.workspace

    @property
    def config(self) -> DreamSettings:
        return self.settings.dreaming

    def note(self, day: str, *lines: str) -> str:
        """Append lines to the daily note of `day` (a commit dated that day); its path."""
        path = f"memory/{day}.md"
        with self.on(day):
            self.files.append(path, "\n".join(lines), reason="tool")
        return path

    def memory(self, *lines: str, day: str | None = None) -> None:
        """Write MEMORY.md whole (a commit dated `day`, today by default)."""
        with self.on(day or self.clock.now.date().isoformat()):
            self.files.read("MEMORY.md")
            self.files.write(
                "MEMORY.md", "# MEMORY.md\n\n" + "\n".join(lines) + "\n", reason="user"
            )

    def recalled(
        self,
        path: str,
        line: int,
        queries: list[str],
        *,
        days: list[str] | None = None,
        score: float = 0.7,
        beside: float | None = None,
    ) -> None:
        """Plant one search per query that surfaced the unit at `line` of `path`, on the
        given days in turn (today by default); `beside`: the search's best hit was another
        unit's, of that relevance."""
        self.recall.sync("manual")
        units, _ = self.recall.index.file_units(path)
        unit = next(u for u in units if u.start_line <= line <= u.end_line)
        hit = SearchHit(
            path=path,
            start_line=unit.start_line,
            end_line=unit.end_line,
            score=score,
            vector_score=score,
            text_score=0.0,
            snippet=unit.text,
            citation=f"{path}#L{unit.start_line}",
            unit=unit.id,
        )
        assert self.recall.hit_log is not None
        today = self.clock.now.date().isoformat()
        hits = [hit]
        if beside is not None:
            hits.insert(0, replace(hit, path="memory/elsewhere.md", score=beside, unit=""))
        for index, query in enumerate(queries):
            day = (days or [today])[index % len(days or [today])]
            with self.on(day):
                self.recall.hit_log.record(query, hits)

    async def sweep(self) -> list[Event]:
        return [event async for event in self.dreamer.sweep("manual", window=WINDOW)]

    def on(self, day: str) -> _Moved:
        return _Moved(self.clock, day)


class _Moved:
    """The clock at 12:00 of `day` for the block, then back."""

    def __init__(self, clock: Clock, day: str) -> None:
        self.clock, self.day = clock, day

    def __enter__(self) -> None:
        self.saved = self.clock.now
        when = datetime.combine(date.fromisoformat(self.day), time(12), self.saved.tzinfo)
        self.clock.now = when if when <= self.saved else self.saved

    def __exit__(self, *_: object) -> None:
        self.clock.now = self.saved


def of(events: list[Event], kind: type[Any]) -> list[Any]:
    return [event for event in events if isinstance(event, kind)]


def days_before(clock: Clock, *offsets: int) -> list[str]:
    return [(clock.now.date() - timedelta(days=n)).isoformat() for n in offsets]


def stops(events: list[Event]) -> list[Stopped]:
    """Why the sweep of `events` stopped what it did not propose."""
    (deep,) = of(events, DeepSleepFinished)
    return list(deep.stopped)

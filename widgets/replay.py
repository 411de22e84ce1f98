"""`cairn replay TRACE`: a recorded event trace played back into the TUI.

`ReplayAgent` has the agent's shape but no model: `start()` plays the trace (all of it, or, when
stepped, up to the first turn), and in stepped mode each Enter in the prompt plays the next turn.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from socket import gethostname
from typing import TYPE_CHECKING

from shell.config import DreamSettings
from shell.events import (
    ApprovalChoice,
    DreamTrigger,
    Event,
    FlushStarted,
    MemoryWritten,
    Notice,
    SessionStarted,
    Take,
    TurnStarted,
    UsageUpdated,
    from_json,
)
from shell.git.history import RevertPreview
from shell.memory.paths import note_date
from shell.text import short_sha
from widgets.panes.git_log import GitLogSource
from widgets.source import Playback

if TYPE_CHECKING:
    from shell.dreaming import Decision, Preview
    from widgets.app import CairnApp


NO_REVERT = "a replay shows a recorded session and changes no memory"


@dataclass(frozen=True)
class ReplaySettings:
    workspace: Path
    model: str
    demo: bool
    day: str
    dreaming: DreamSettings = field(default_factory=lambda: DreamSettings(enabled=False))
    """A replay never dreams: the trace holds the sweeps it recorded."""
    git_author_email: str = field(default_factory=lambda: f"cairn@{gethostname().split('.')[0]}")
    watch: bool = False
    """Nothing watches the files for a replay: the panes look at them every couple of seconds."""

    def today(self) -> str:
        return self.day

    @property
    def state_dir(self) -> Path:
        return self.workspace / ".cairn"


@dataclass(frozen=True)
class ReplayMemory:
    """The recorded workspace, as the panes show it."""

    root: Path
    scope: str
    git: GitLogSource | None


@dataclass(frozen=True)
class ReplayBudget:
    window: int
    flush_threshold: int
    compaction_threshold: int


def _trace_day(events: Sequence[Event], today: Callable[[], date]) -> str:
    """The day the trace was recorded, from the last daily note it wrote (else `today`)."""
    for event in reversed(events):
        path = event.path if isinstance(event, MemoryWritten) else None
        path = event.target if isinstance(event, FlushStarted) else path
        if path and (day := note_date(path)):
            return day.isoformat()
    return today().isoformat()


def split_turns(events: Sequence[Event]) -> list[list[Event]]:
    """The trace cut before each turn_started: [prelude, turn 1, turn 2, …]."""
    segments: list[list[Event]] = [[]]
    for event in events:
        if isinstance(event, TurnStarted) and segments[-1]:
            segments.append([])
        segments[-1].append(event)
    return segments


class ReplayAgent:
    """Plays recorded events; `stepped` waits for Enter between turns."""

    def __init__(
        self,
        events: Sequence[Event],
        workspace: Path,
        *,
        stepped: bool = False,
        git: GitLogSource | None = None,
        today: Callable[[], date] = date.today,
    ) -> None:
        started = next((e for e in events if isinstance(e, SessionStarted)), None)
        usage = next((e for e in events if isinstance(e, UsageUpdated)), None)
        self.settings = ReplaySettings(
            workspace=workspace,
            model=started.model if started else "replay",
            demo=started.demo if started else False,
            day=_trace_day(events, today),
        )
        self.budget = ReplayBudget(
            window=usage.window if usage else 8192,
            flush_threshold=usage.flush_threshold if usage else 0,
            compaction_threshold=usage.compaction_threshold if usage else 0,
        )
        self.session_id = started.session_id if started else "replay"
        self.git = git
        self.own = ReplayMemory(workspace, "global", git)
        self.playback = Playback(stepped=stepped)
        self._segments = split_turns(events) if stepped else [list(events)]

    @property
    def remaining_turns(self) -> int:
        return len(self._segments)

    async def _play(self) -> AsyncIterator[Event]:
        if not self._segments:
            return
        for event in self._segments.pop(0):
            yield event

    def history(self) -> list[Event]:
        """None apart: a trace holds a resumed session's replayed view in order."""
        return []

    def start(self) -> AsyncIterator[Event]:
        return self._play()

    def submit(self, text: str) -> AsyncIterator[Event]:
        return self._play()

    def cancel(self) -> bool:
        return False  # a trace has no turn to stop: the app cancels its worker

    def answer_approval(self, call_id: str, choice: ApprovalChoice, reason: str = "") -> bool:
        return False  # a trace holds its decisions

    def dream(self, trigger: DreamTrigger = "manual") -> AsyncIterator[Event]:
        return self._nothing()

    def decide(self, decision: Decision) -> AsyncIterator[Event]:
        return self._nothing()

    def open_proposals(self) -> list[Preview]:
        return []

    def edited_by_user(self, path: str) -> AsyncIterator[Event]:
        return self._nothing()  # a replay has no core to commit with (F4 says so, widgets.editor)

    def resolve_conflict(self, file: str, take: Take) -> AsyncIterator[Event]:
        return self._nothing()  # the trace holds how its conflicts were settled

    async def forget(
        self, place: str, *, apply: bool, scope: str = "global"
    ) -> AsyncIterator[Event]:
        yield Notice(f"{place} not forgotten: a replay changes no memory", "warning")

    def memories(self) -> dict[str, Path]:
        return {"global": self.settings.workspace}

    async def revert(self, sha: str) -> AsyncIterator[Event]:
        yield Notice(f"{short_sha(sha)} not reverted: {NO_REVERT}", "warning")

    def revert_preview(self, sha: str) -> RevertPreview:
        return RevertPreview(sha, "", False, NO_REVERT)

    async def _nothing(self) -> AsyncIterator[Event]:
        nothing: tuple[Event, ...] = ()
        for event in nothing:
            yield event

    def background_events(self) -> AsyncIterator[Event]:
        """None: a trace holds its background events in order with the rest."""
        return self._nothing()

    async def aclose(self) -> None:
        return None


def load_trace(path: Path) -> list[Event]:
    """Read a JSONL trace (one `shell.events.to_json` line each; blank lines skipped).

    Raises:
        ValueError: a line is not a known event; the message names the line.
    """
    events: list[Event] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            events.append(from_json(line))
        except (ValueError, TypeError) as error:
            raise ValueError(f"{path}:{number}: {error}") from None
    return events


def replay_app(events: list[Event], workspace: Path, *, stepped: bool = False) -> CairnApp:
    """A CairnApp that plays recorded `events` (delay-free, or one turn per Enter if `stepped`).

    The side panes read the workspace as it is now, and the git pane shows its real log.
    """
    from shell.build import open_history
    from widgets.app import CairnApp

    return CairnApp(ReplayAgent(events, workspace, stepped=stepped, git=open_history(workspace)))

"""What the TUI needs from an agent: the shape `shell.agent.Agent` has, as a Protocol, so the
app also runs a recorded trace (`widgets.replay`) or a test's scripted fake."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from shell.events import ApprovalChoice, DreamTrigger, Event, Take
from widgets.panes.git_log import GitLogSource
from widgets.panes.shown import OwnMemory

if TYPE_CHECKING:
    from shell.dreaming import Decision, Preview
    from shell.git.history import RevertPreview


class DreamSettingsLike(Protocol):
    @property
    def enabled(self) -> bool: ...

    @property
    def idle_minutes(self) -> float: ...


def planned_memory(settings: SettingsLike) -> tuple[Path, str]:
    """The folder and label of the memory a session with `settings` will write, before it is
    built: its project's when one is open (`shell.scopes`), else the global one."""
    from shell.config import Settings
    from shell.scopes.scopes import session_scopes

    if not isinstance(settings, Settings):  # a replay's: the recorded workspace
        return settings.workspace, "global"
    own = session_scopes(settings).own
    return own.workspace, own.label


class SettingsLike(Protocol):
    @property
    def workspace(self) -> Path: ...

    @property
    def state_dir(self) -> Path: ...

    @property
    def model(self) -> str: ...

    @property
    def demo(self) -> bool: ...

    @property
    def dreaming(self) -> DreamSettingsLike: ...

    @property
    def watch(self) -> bool:
        """Whether the core watches the memory files and reports edits made outside Cairn as
        events; when not, the side panes look at the files' mtimes every couple of seconds."""
        ...

    @property
    def git_author_email(self) -> str:
        """`cairn@<host>`: the host names this machine in the git log pane."""
        ...

    def today(self) -> str: ...


class BudgetLike(Protocol):
    @property
    def window(self) -> int: ...

    @property
    def flush_threshold(self) -> int: ...

    @property
    def compaction_threshold(self) -> int: ...


@dataclass(frozen=True)
class Playback:
    """What a recorded session played back (`widgets.replay`) does otherwise than an agent: it
    asks no one (the trace holds its decisions), edits no memory (it has no core to commit
    with), and, when `stepped`, plays its next turn on Enter in an empty prompt."""

    stepped: bool = False


class AgentSource(Protocol):
    @property
    def settings(self) -> SettingsLike: ...

    @property
    def playback(self) -> Playback | None:
        """None for a live agent; how a recorded session is played back otherwise."""
        ...

    @property
    def budget(self) -> BudgetLike: ...

    @property
    def session_id(self) -> str: ...

    @property
    def git(self) -> GitLogSource | None: ...

    @property
    def own(self) -> OwnMemory:
        """The memory the session writes (its project's when one is open): the panes show it."""
        ...

    def history(self) -> list[Event]:
        """What a resumed session showed before, to show again first (blocking: call it off
        the event loop); empty for a new session."""
        ...

    def start(self) -> AsyncIterator[Event]: ...

    def submit(self, text: str) -> AsyncIterator[Event]: ...

    def cancel(self) -> bool:
        """Ask the turn under way to stop at its next safe point; False when it cannot (no turn
        runs, or the source has no core), and the caller cancels its stream instead."""
        ...

    def answer_approval(self, call_id: str, choice: ApprovalChoice, reason: str = "") -> bool:
        """The user's answer to a call waiting for approval; False when none waits."""
        ...

    def dream(self, trigger: DreamTrigger = "manual") -> AsyncIterator[Event]:
        """A dreaming sweep."""
        ...

    def decide(self, decision: Decision) -> AsyncIterator[Event]:
        """A person's decision on one of dreaming's proposals."""
        ...

    def open_proposals(self) -> list[Preview]:
        """The proposals waiting for review (blocking: call it off the event loop)."""
        ...

    def edited_by_user(self, path: str) -> AsyncIterator[Event]:
        """Memory file `path` (workspace-relative) was saved in the user's editor: commit it as
        their edit (or say it is unchanged) and re-index it."""
        ...

    def resolve_conflict(self, file: str, take: Take) -> AsyncIterator[Event]:
        """Settle a sync conflict: keep the local file, take the remote's, or both."""
        ...

    def forget(self, place: str, *, apply: bool, scope: str = "global") -> AsyncIterator[Event]:
        """What forgetting the line at `place` (`file:line` of the memory labelled `scope`)
        would rewrite (a preview `MemoryForgotten`), or with `apply` the purge; a notice when it
        cannot be forgotten."""
        ...

    def memories(self) -> dict[str, Path]:
        """The workspace of each memory the session reads, by the label its hits show."""
        ...

    def revert(self, sha: str) -> AsyncIterator[Event]:
        """Undo memory commit `sha` as a new commit: a `MemoryWritten` per file it changed, or
        a notice of why nothing changed."""
        ...

    def revert_preview(self, sha: str) -> RevertPreview:
        """What reverting `sha` would change, and whether it applies (blocking: call it off the
        event loop)."""
        ...

    def background_events(self) -> AsyncIterator[Event]:
        """Events between turns (index sync, file watching), for as long as the app runs."""
        ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True)
class AgentPlan:
    """An agent still to be built: what the first frame shows of it, and how to build it.

    `CairnApp` paints its first frame from the settings and the budget alone, then calls
    `build` (blocking, on the event loop, so nothing can see the app without its agent), so
    the core's imports and the workspace's opening no longer delay that frame. A resumed
    session's id and what it showed (`history`, read without building the agent) come with
    that frame."""

    settings: SettingsLike
    budget: BudgetLike
    build: Callable[[], AgentSource]
    session_id: str = ""
    """The session it resumes; empty for a new one."""
    history: Callable[[], list[Event]] = list
    """What the resumed session showed before (as `AgentSource.history`)."""

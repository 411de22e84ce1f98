"""Memory writes and recall."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from shell.events.base import BaseEvent

# --- memory writes -------------------------------------------------------------------------


@dataclass(frozen=True)
class MemoryWritten(BaseEvent):
    """A memory file was written through the one door; `commit` is the git sha (None if the
    commit failed, in which case `commit_error` says why and the file is still written)."""

    type: ClassVar[str] = "memory_written"
    path: str
    bytes: int
    commit: str | None
    reason: str  # tool, flush, dream, user
    lines_added: int = 0
    lines_skipped: int = 0
    commit_error: str | None = None
    outside_edit: bool = False
    """An append found an edit made outside Cairn (an editor's save) since Cairn last wrote or
    read the file: the edit was kept, and is committed with this write."""


@dataclass(frozen=True)
class SecretsRedacted(BaseEvent):
    """Credentials in a memory write were replaced by `[REDACTED <kind>]` before the file was
    written and committed. The values themselves are never in an event."""

    type: ClassVar[str] = "secrets_redacted"
    path: str
    kinds: list[str]


@dataclass(frozen=True)
class GitLockCleared(BaseEvent):
    """Stale git lock files (a killed git left them) were removed; `path` lists them."""

    type: ClassVar[str] = "git_lock_cleared"
    path: str
    age_s: float


# --- recall --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SearchPerformed(BaseEvent):
    """One memory_search: `hits` are dicts with path, start_line, end_line, score,
    vector_score, text_score, citation, date, in_time_frame. `mode`: hybrid, keyword-only,
    vector-only. `time_frame`: the time the query named ("last week: 2026-11-23 to …")."""

    type: ClassVar[str] = "search_performed"
    query: str
    mode: str
    hits: list[dict[str, Any]]
    timings_ms: dict[str, float] = field(default_factory=dict)
    degraded_reason: str | None = None
    nothing_relevant: bool = False
    time_frame: str | None = None


@dataclass(frozen=True)
class IndexSyncProgress(BaseEvent):
    type: ClassVar[str] = "index_sync_progress"
    files_done: int
    files_total: int
    chunks: int
    embedded: int


@dataclass(frozen=True)
class IndexSynced(BaseEvent):
    type: ClassVar[str] = "index_synced"
    files_changed: int
    files_removed: int
    chunks_total: int
    embedded: int
    duration_ms: float
    trigger: str  # session_start, search, watch, manual


@dataclass(frozen=True)
class IndexRebuilt(BaseEvent):
    """The index was rebuilt from the files (missing, corrupt, or identity changed)."""

    type: ClassVar[str] = "index_rebuilt"
    reason: str

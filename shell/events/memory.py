"""Memory writes and recall."""

from __future__ import annotations

from dataclasses import field
from typing import ClassVar, Literal

from shell.events.base import BaseEvent, frozen

WriteReason = Literal["tool", "flush", "dream", "user", "revert", "resolve", "mcp"]
"""Why a file was written: a tool call, a flush, a dream decision, the user's edit, a revert of
an earlier commit (`shell.git.history`), the settling of a sync conflict (`shell.sync`), or a
call of another agent through `cairn mcp` (`shell.mcp_server`), whose commit names its client."""
WriteState = Literal["committed", "unchanged", "failed"]
SearchMode = Literal["hybrid", "keyword-only", "vector-only"]
CitationMark = Literal["fresh", "stale", "gone", "unchecked"]
"""What a memory line's citation of a project file (`README.md#L12@3f9a1c2b`) says now: the
cited lines still hash as recorded (fresh), they changed (stale), the file or the lines are
missing (gone), or nothing could be compared (unchecked: no hash, no project, a refused path)."""
SyncTrigger = Literal["session_start", "search", "watch", "manual", "dream", "rebuild", "pull"]

# --- memory writes -------------------------------------------------------------------------


@frozen
class MemoryWritten(BaseEvent):
    """A memory file was written through the one door, or would have been (`outcome`).

    `commit` is the git sha; None when there was nothing to write (every line already there)
    or when the commit failed, in which case `commit_error` says why and the file is still
    written.
    """

    type: ClassVar[str] = "memory_written"
    path: str
    bytes: int
    commit: str | None
    reason: WriteReason
    lines_added: int = 0
    lines_skipped: int = 0
    lines_removed: int = 0
    """Lines the write took out (a changed line is one added and one removed)."""
    commit_error: str | None = None
    lines_forgotten: int = 0
    """Lines the write did not put back because they were forgotten (`shell.forget`)."""
    citations_unhashed: list[str] = field(default_factory=list)
    """The citations of project files on the written lines that got no hash, each with why
    ("../x#L1: outside the project folder")."""
    outside_edit: bool = False
    """An append found an edit made outside Cairn (an editor's save) since Cairn last wrote or
    read the file: the edit was kept, and is committed with this write."""
    scope: str = "global"
    """The memory written (`shell.scopes`): "global", or "project:<folder name>"."""

    @property
    def outcome(self) -> WriteState:
        """committed (`commit` is its sha), unchanged (nothing new: no write, no commit) or
        failed (written, but the commit failed: `commit_error`)."""
        if self.commit:
            return "committed"
        return "failed" if self.commit_error else "unchanged"


@frozen
class MemoryForgotten(BaseEvent):
    """A line was forgotten (`shell.forget`), or would be (`applied` False: a preview).

    `tombstone` is the hash kept so it is never written back (`sha256:<hex>`); `places` are
    where the working files held it (`file:line`, before). The counts say what was rewritten:
    commits of the history, files, search index rows, hit log entries, dream state entries and
    transcript files; `pushed` that the purged history reached the remote (`push_error` why
    not). Never the text itself.
    """

    type: ClassVar[str] = "memory_forgotten"
    tombstone: str
    applied: bool
    places: list[str] = field(default_factory=list)
    commits: int = 0
    files: list[str] = field(default_factory=list)
    index_rows: int = 0
    hit_log_entries: int = 0
    dream_entries: int = 0
    transcripts: int = 0
    objects_pruned: bool = False
    """No object of the local repository holds the line any more (checked after a gc)."""
    pushed: bool = False
    push_error: str | None = None


@frozen
class SecretsRedacted(BaseEvent):
    """Credentials in a memory write were replaced by `[REDACTED <kind>]` before the file was
    written and committed. The values themselves are never in an event."""

    type: ClassVar[str] = "secrets_redacted"
    path: str
    kinds: list[str]


@frozen
class GitLockCleared(BaseEvent):
    """Stale git lock files (a killed git left them) were removed; `path` lists them."""

    type: ClassVar[str] = "git_lock_cleared"
    path: str
    age_s: float


# --- recall --------------------------------------------------------------------------------


@frozen
class CitationCheck:
    """One citation of a project file on a recalled line, checked against the file now.

    `reason` says why in words ("README.md#L12 changed since this was written"); `moved_to` is
    the range that holds the cited text now when it moved (`L14-L16`), else "".
    """

    citation: str
    mark: CitationMark
    reason: str = ""
    moved_to: str = ""


@frozen
class SearchHit:
    """One recalled unit, cited with its window.

    `score` is the relevance (the blend of the two legs); `vector_score` is the raw cosine and
    `text_score` the normalised BM25 (0 when that leg did not find it).
    """

    path: str
    start_line: int
    end_line: int
    score: float
    vector_score: float
    text_score: float
    snippet: str
    citation: str
    date: str | None = None
    """The date of the daily note the hit comes from (ISO), None for undated files."""
    in_time_frame: bool = False
    """True when that date lies in the time the query named."""
    unit: str = ""
    """The id of the unit that matched (`Chunk.id`: path, lines and text hash), which the
    window around it cites; the hit log counts recalls by it."""
    rerank_score: float | None = None
    """The cross-encoder's calibrated relevance (0 to 1) when the search was reranked; `score`
    is then this value. None when no cross-encoder read the hit."""
    scope: str = "global"
    """The memory the hit comes from (`shell.scopes`): "global", or "project:<folder name>"."""
    citations: list[CitationCheck] = field(default_factory=list)
    """The snippet's citations of project files, each checked against the file at recall."""


@frozen
class SearchPerformed(BaseEvent):
    """One memory search. `time_frame`: the time the query named ("last week: 2026-11-23 to
    …"). `call_id`: the memory_search call it answered ("" for `cairn search`). `reranker`: the
    cross-encoder that reordered the hits (None: the hybrid order answered)."""

    type: ClassVar[str] = "search_performed"
    query: str
    mode: SearchMode
    hits: list[SearchHit]
    timings_ms: dict[str, float] = field(default_factory=dict)
    degraded_reason: str | None = None
    nothing_relevant: bool = False
    time_frame: str | None = None
    call_id: str = ""
    reranker: str | None = None


@frozen
class IndexSyncProgress(BaseEvent):
    """A sync under way: files chunked of those changed, then texts embedded of those no cache
    holds (`to_embed`, 0 while files are still being chunked)."""

    type: ClassVar[str] = "index_sync_progress"
    files_done: int
    files_total: int
    chunks: int
    embedded: int
    to_embed: int = 0


@frozen
class CappedFile:
    """A memory file too large to index whole: search sees it only up to `indexed_to_line`
    (its first `MAX_FILE_UNITS` units); memory_get still reads all of it."""

    path: str
    indexed_to_line: int


@frozen
class IndexSynced(BaseEvent):
    """The index is up to date with the files. `capped`: the files it holds only in part."""

    type: ClassVar[str] = "index_synced"
    files_changed: int
    files_removed: int
    chunks_total: int
    embedded: int
    duration_ms: float
    trigger: SyncTrigger
    capped: list[CappedFile] = field(default_factory=list)


@frozen
class IndexRebuilt(BaseEvent):
    """The index was rebuilt from the files (missing, corrupt, or identity changed)."""

    type: ClassVar[str] = "index_rebuilt"
    reason: str
    scope: str = "global"
    """The memory whose index it is (`shell.scopes`): a session has more than one."""

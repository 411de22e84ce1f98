"""Syncing the workspace through a git remote (`shell.sync`).

A URL in any of these events has lost its userinfo already (`https://***@host/…`): a token
in a remote's address never reaches an event, a message or a log.
"""

from __future__ import annotations

from dataclasses import field
from typing import ClassVar, Literal

from shell.events.base import BaseEvent, frozen

FailureKind = Literal["offline", "auth", "rewritten", "secret", "conflict", "error"]
"""Why a sync failed (see `SyncFailed`)."""
Take = Literal["local", "remote", "both"]
"""How a conflict is settled: keep the local file, take the remote's, or both (local, then the
remote's lines it lacks)."""


@frozen
class SyncRemoteAdded(BaseEvent):
    """The workspace now syncs with `url` (its history is merged by the sync that follows)."""

    type: ClassVar[str] = "sync_remote_added"
    url: str


@frozen
class SyncCloned(BaseEvent):
    """A workspace was cloned from `url` into `directory`, with `commits` commits."""

    type: ClassVar[str] = "sync_cloned"
    url: str
    directory: str
    commits: int


@frozen
class SyncConflict(BaseEvent):
    """Both sides changed a curated file in ways that do not merge cleanly.

    Until it is settled the file holds the local lines, then the remote's lines it lacks (and
    so does the merge commit pushed: the other machine loses nothing to the wait); the remote's
    version is in `side_file` (under the git-ignored `.cairn/sync/conflicts/`), and `diff` is
    the unified diff from the local version to the remote's, for review. `resolve(file, take)`
    settles it: local or remote removes the other side's lines, both keeps the file.
    """

    type: ClassVar[str] = "sync_conflict"
    file: str
    diff: str
    local_sha: str
    remote_sha: str
    side_file: str


@frozen
class SyncFinished(BaseEvent):
    """A sync fetched, merged and pushed.

    `pulled_commits` came in, `pushed_commits` went out. `files`, `lines_added` and
    `lines_removed` count what the pull changed in this working tree; `changed` lists the memory
    files among them (the ones to re-index). `conflicts` names the files left for review (see
    the SyncConflict events).
    """

    type: ClassVar[str] = "sync_finished"
    pulled_commits: int
    pushed_commits: int
    files: int
    lines_added: int
    changed: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    outside_edits: list[str] = field(default_factory=list)
    """Files edited outside Cairn and not yet committed, committed before the merge."""
    lines_removed: int = 0


@frozen
class SyncFailed(BaseEvent):
    """A sync, clone or resolve did not complete; `message` is one line, without secrets.

    offline: the remote could not be reached (retry with `Backoff`); auth: it refused us;
    rewritten: its history was force-pushed (nothing was merged); secret: an outgoing commit
    holds a credential (nothing was pushed); conflict: a resolve had nothing to settle; error:
    anything else. Whatever failed, the working tree is as it was or at a complete merge.
    """

    type: ClassVar[str] = "sync_failed"
    kind: FailureKind
    message: str


@frozen
class SyncResolved(BaseEvent):
    """A conflict was settled by taking `take`; `commit` is the new commit (None when the file
    stays as it was: both, which it already held)."""

    type: ClassVar[str] = "sync_resolved"
    file: str
    take: Take
    commit: str | None


@frozen
class SyncRecovered(BaseEvent):
    """What an interrupted git operation left behind was cleaned up at start-up."""

    type: ClassVar[str] = "sync_recovered"
    detail: str


@frozen
class SyncStatusChanged(BaseEvent):
    """Where the sync stands, for the status line: after every sync attempt, and at start.

    `last_sync`: ISO 8601 time of the last complete sync (None: never). `ahead`: commits to
    push; `behind`: remote commits not merged yet (as of the last fetch). `offline`: the last
    attempt could not reach the remote, and `retry_in_s` says when the next one is.
    """

    type: ClassVar[str] = "sync_status_changed"
    remote: str | None
    last_sync: str | None
    ahead: int
    behind: int
    offline: bool
    conflicts: list[str] = field(default_factory=list)
    retry_in_s: float | None = None


@frozen
class SyncRedactionPreviewed(BaseEvent):
    """What a redaction of the commits not pushed yet would change (`SyncEngine.redact_unpushed`):
    `commits` of them, after the remote's head `base` (None: the remote has none yet), and
    one line per secret in them (commit, file and line or name or message, kind, the line with
    the secret masked). `hint` says how to apply it from where it was asked."""

    type: ClassVar[str] = "sync_redaction_previewed"
    base: str | None
    commits: int
    findings: list[str] = field(default_factory=list)
    hint: str = ""


@frozen
class SyncRedacted(BaseEvent):
    """The commits not pushed yet were rewritten with their secrets redacted: `commits` of
    them, HEAD is now `head` and the working tree matches it (`files` changed); the commits
    already pushed are untouched."""

    type: ClassVar[str] = "sync_redacted"
    commits: int
    head: str
    files: list[str] = field(default_factory=list)


@frozen
class SyncForgotten(BaseEvent):
    """The history held lines forgotten (`cairn forget`, here or on another machine, said by
    the tombstones the remote carries): it was purged of them, pushed commits and unpushed
    alike (`commits` rewritten, `unpushed_commits` of them not pushed yet), the working tree
    moved with it (`files`), and `.cairn/` scrubbed. Counts and hashes only, never the text."""

    type: ClassVar[str] = "sync_forgotten"
    commits: int
    unpushed_commits: int
    tombstones: int
    files: list[str] = field(default_factory=list)
    transcripts: int = 0
    dream_entries: int = 0
    hit_log_entries: int = 0
    index_removed: bool = False


SyncEvent = (
    SyncRemoteAdded
    | SyncCloned
    | SyncConflict
    | SyncFinished
    | SyncFailed
    | SyncResolved
    | SyncRecovered
    | SyncStatusChanged
    | SyncRedactionPreviewed
    | SyncRedacted
    | SyncForgotten
)
"""What `shell.sync` reports (each is in `shell.events.Event` too)."""

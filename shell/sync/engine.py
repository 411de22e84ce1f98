"""One memory on every machine: the workspace syncs through a git remote, no line lost.

`SyncEngine.sync()` fetches the remote, merges it (`shell.sync.merge`: daily notes as a union
of lines, curated files cleanly or not at all), scans what would leave for secrets, and pushes;
a push that loses a race fetches, merges and tries again. Every step that touches the tree or
HEAD holds the repository's lock (`shell.git.lock.repo_lock`), so a memory write
never interleaves with a merge; the network waits happen outside it. Failures are values: a
`SyncFailed` event of a kind the caller can act on (`offline` → retry with `Backoff`).

Blocking: the caller runs it on a thread.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from shell.events.memory import MemoryWritten
from shell.events.sync import (
    SyncConflict,
    SyncEvent,
    SyncFailed,
    SyncFinished,
    SyncRemoteAdded,
    Take,
)
from shell.events.turns import Notice
from shell.git.lock import repo_lock
from shell.git.runner import Git, GitFailure, redact_url
from shell.memory.files.plain import not_text_notices
from shell.memory.forget.purge import Purged
from shell.memory.forget.tombstones import Tombstones
from shell.secrets.push_scan import describe_findings, scan_commits, scan_outgoing
from shell.sync.clone import choose_branch
from shell.sync.forgotten import PRUNE_PENDING, Purges, accepts_rewrite, settle, tidy
from shell.sync.prepare import commit_outside_edits, ensure_attributes, ensure_ignored
from shell.sync.pull import Pulled, fetch, take_in
from shell.sync.push import REMOTE, push_head
from shell.sync.redact import not_rewritten_moved, preview, redact_outgoing
from shell.sync.repair import recover_repository, resolve_conflict
from shell.sync.state import (
    ConflictRecord,
    SavedState,
    SyncStatus,
    find_conflict,
    load_state,
    open_conflicts,
    parse_time,
    save_conflict,
    save_state,
    side_file_for,
)
from shell.sync.told import told

PUSH_TRIES = 3


class SyncEngine:
    """Syncs one workspace (a git repository) with its remote `origin`.

    Args:
        workspace: The workspace root.
        author_name: Author and committer of the merge and resolve commits.
        author_email: Their email.
        clock: The time of those commits and of the last sync; the system clock when None.
        push_tries: How many times a push that lost a race is retried after a new merge.
    """

    def __init__(
        self,
        workspace: Path,
        *,
        author_name: str,
        author_email: str,
        clock: Callable[[], datetime] | None = None,
        push_tries: int = PUSH_TRIES,
    ) -> None:
        self.root = Path(workspace).resolve()
        self._clock = clock
        self._git = Git(self.root, author_name=author_name, author_email=author_email, clock=clock)
        self._lock = repo_lock(self.root)
        self._push_tries = max(1, push_tries)
        self._git_dir: Path | None = None

    # --- the public operations ----------------------------------------------------------------

    def add_remote(self, url: str, *, branch: str | None = None) -> list[SyncEvent | Notice]:
        """Make `url` this workspace's remote and sync with it: both histories are merged (two
        workspaces seeded apart included), none is discarded. The remote's branch is chosen by
        `shell.sync.clone`'s rule (`branch`: the one asked for); when the rule refuses, nothing
        is changed. An unreachable remote is set all the same, and the first sync that reaches
        it chooses."""
        choice: str | None = branch
        failed: GitFailure | None = None
        try:
            choice = choose_branch(self._git, url, wanted=branch, fallback=self._branch()).branch
        except GitFailure as failure:
            if failure.kind not in ("offline", "auth"):
                return [SyncFailed(kind=failure.kind, message=redact_url(failure.message))]
            failed = failure
        try:
            with self._lock:
                has = self._git.run(["remote", "get-url", REMOTE], check=False).code == 0
                self._git.run(["remote", "set-url" if has else "add", REMOTE, url])
                for stale in {self._tracked(load_state(self.root)), choice or self._branch()}:
                    tracking = f"refs/remotes/{REMOTE}/{stale}"
                    self._git.run(["update-ref", "-d", tracking], check=False)
                state = SavedState(branch=choice)
                if failed is not None:
                    state.offline = failed.kind == "offline"
                    state.last_error = f"{failed.kind}: {failed.message}"
                save_state(self.root, state)
        except GitFailure as failure:
            return [SyncFailed(kind="error", message=failure.message)]
        added = SyncRemoteAdded(url=redact_url(url))
        if failed is not None:
            return [added, SyncFailed(kind=failed.kind, message=redact_url(failed.message))]
        return [added, *self._sync(pull=True)]

    def sync(self, *, purged: tuple[Tombstones, Purged] | None = None) -> list[SyncEvent | Notice]:
        """Fetch, merge and push. Ends with one SyncFinished or one SyncFailed event, after a
        SyncConflict for each curated file left for review (and a Notice for each file edited
        outside Cairn that is not plain Markdown text, committed all the same). `purged`: the
        history a forget just purged with those tombstones, not to be purged again."""
        return self._sync(pull=True, purged=purged)

    def redact_unpushed(self, *, apply: bool, hint: str = "") -> list[SyncEvent]:
        """What rewriting the commits not pushed yet with their secrets redacted would change
        (a SyncRedactionPreviewed event, with `hint` on how to apply it), and with `apply`
        the rewrite itself (`shell.sync.redact`). It fetches first and is refused when the
        remote moved since the last sync, or when HEAD does not hold the remote's head: the
        commits already pushed are never rewritten."""
        if self._url() is None:
            return [SyncFailed(kind="error", message="this workspace has no remote: add one first")]
        state = load_state(self.root)
        branch = self._tracked(state)
        try:
            remote_head = fetch(self._git, REMOTE, branch, state.remote_head)
            with self._lock:
                known = self._git.rev(f"refs/remotes/{REMOTE}/{branch}")
                head = self._git.out("rev-parse", "HEAD")
                if remote_head != known or (
                    remote_head is not None and not self._git.is_ancestor(remote_head, head)
                ):
                    return [not_rewritten_moved(remote_head, known)]
                scan = scan_commits(self._git, head, remote_head)
                events: list[SyncEvent] = [preview(scan, remote_head, hint)]
                if apply and scan.findings:
                    events += redact_outgoing(self._git, self.root, head, remote_head, scan)
                return events
        except GitFailure as failure:
            return [SyncFailed(kind=failure.kind, message=redact_url(failure.message))]

    def push_only(self) -> list[SyncEvent | Notice]:
        """Push without fetching or merging; refused (kind "error") when the remote has commits
        this workspace has not merged."""
        return self._sync(pull=False)

    def resolve(self, file: str, take: Take) -> list[SyncEvent | MemoryWritten]:
        """Settle the open conflict of `file`: keep the local version, take the remote's, or
        both (local, then the remote's lines local lacks), as a new commit."""
        with self._lock:
            return resolve_conflict(self.root, self._git, file, take)

    def recover(self) -> list[SyncEvent]:
        """At start-up: undo what a killed pull or merge left (a merge in progress, stale
        `.git/*.lock` files, a half-applied merge of memory files), and say what was done."""
        with self._lock:
            return recover_repository(self.root, self._git, self._gitdir())

    def status(self) -> SyncStatus:
        """The sync's state for the status line; `behind` is as of the last fetch."""
        state = load_state(self.root)
        url = self._url()
        ahead = behind = 0
        tracking = f"refs/remotes/{REMOTE}/{self._tracked(state)}" if url else None
        if tracking and self._git.rev(tracking):
            counts = self._git.run(
                ["rev-list", "--left-right", "--count", f"HEAD...{tracking}"], check=False
            ).stdout.split()
            if len(counts) == 2:
                ahead, behind = int(counts[0]), int(counts[1])
        elif url and self._git.rev("HEAD"):
            ahead = int(self._git.out("rev-list", "--count", "HEAD"))
        return SyncStatus(
            remote=redact_url(url) if url else None,
            last_sync=parse_time(state.last_sync),
            ahead=ahead,
            behind=behind,
            offline=state.offline,
            conflicts=[record.file for record in open_conflicts(self.root)],
            last_error=state.last_error,
        )

    # --- one sync ------------------------------------------------------------------------------

    def _sync(
        self, *, pull: bool, purged: tuple[Tombstones, Purged] | None = None
    ) -> list[SyncEvent | Notice]:
        url = self._url()
        if url is None:
            return [SyncFailed(kind="error", message="this workspace has no remote: add one first")]
        state = load_state(self.root)
        events: list[SyncEvent | Notice] = []
        pulled = Pulled()
        try:
            with self._lock:
                outside = self._prepare()
            events.extend(not_text_notices(self.root, outside))
            if state.branch is None and state.last_sync is None:
                state.branch = choose_branch(
                    self._git, url, wanted=None, fallback=self._branch()
                ).branch
            pushed = self._pull_and_push(
                state, pulled, events, pull=pull, url=url, purges=Purges(self._git, purged)
            )
        except GitFailure as failure:
            state.offline = failure.kind == "offline"
            state.last_error = f"{failure.kind}: {failure.message}"
            save_state(self.root, state)
            return [*events, SyncFailed(kind=failure.kind, message=redact_url(failure.message))]
        state.offline, state.last_error = False, None
        state.last_sync = self._now().isoformat()
        save_state(self.root, state)
        return [
            *events,
            SyncFinished(
                pulled_commits=pulled.commits,
                pushed_commits=pushed,
                files=len(pulled.files),
                lines_added=pulled.lines_added,
                lines_removed=pulled.lines_removed,
                changed=pulled.changed,
                conflicts=[event.file for event in events if isinstance(event, SyncConflict)],
                outside_edits=outside,
            ),
        ]

    def _pull_and_push(
        self,
        state: SavedState,
        pulled: Pulled,
        events: list[SyncEvent | Notice],
        *,
        pull: bool,
        url: str,
        purges: Purges,
    ) -> int:
        """Returns how many commits were pushed, adds a SyncConflict to `events` for each file
        left for review; raises GitFailure. Until a first sync completed, the remote's history
        may share no commit with this one: it is merged (a join), not refused as rewritten."""
        branch = self._tracked(state)
        first = state.last_sync is None
        tracking = f"refs/remotes/{REMOTE}/{branch}"
        purged = False
        for _ in range(self._push_tries):
            lease: str | None = None
            if pull:
                previous = state.remote_head
                remote_head = fetch(
                    self._git,
                    REMOTE,
                    branch,
                    previous,
                    accept=lambda old, new: accepts_rewrite(self._git, purges, old, new),
                )
                head = self._git.out("rev-parse", "HEAD")
                base = remote_head
                if remote_head is not None:
                    self._git.run(["update-ref", tracking, remote_head])
                    state.remote_head = remote_head
                    with self._lock:
                        settled = settle(self._git, self.root, purges, head, remote_head, previous)
                        events.extend(settled.events)
                        pulled.files.update(settled.files)
                        purged = purged or settled.purged
                        head, base, lease = settled.head, settled.incoming, settled.lease
                        old = head
                        head = take_in(
                            self._git,
                            self.root,
                            self._gitdir(),
                            base,
                            message=f"sync: merge {redact_url(url)} ({branch})",
                            allow_unrelated=first,
                            pulled=pulled,
                        )
                        events.extend(self._conflict_events(pulled))
                        if head != old:
                            events.extend(told(self._git, self.root, old, base))
                if head == remote_head:
                    self._tidy(purged)
                    return 0
            else:
                remote_head = base = self._git.rev(tracking)
                head = self._git.out("rev-parse", "HEAD")
                if remote_head is not None and self._git.is_ancestor(head, remote_head):
                    if head != remote_head:
                        raise GitFailure("error", "the remote has commits not merged here: sync")
                    return 0
            count, findings = scan_outgoing(self._git, head, base)
            if findings:
                raise GitFailure("secret", describe_findings(findings))
            if self._push(branch, head, lease=lease):
                self._git.run(["update-ref", tracking, head])
                state.remote_head = head
                self._tidy(purged)
                return count
            if not pull:
                raise GitFailure("error", "the remote has commits not merged here: sync first")
        raise GitFailure(
            "error", f"the remote kept moving: the push lost the race {self._push_tries} times"
        )

    def _push(self, branch: str, head: str, *, lease: str | None = None) -> bool:
        return push_head(self._git, branch, head, lease=lease)

    def _tidy(self, purged: bool) -> None:
        """Prune what a purge left, this sync's or one a failure kept from being pruned."""
        if purged or (self.root / PRUNE_PENDING).exists():
            with self._lock:
                tidy(self._git, self._gitdir(), self.root)

    def _conflict_events(self, pulled: Pulled) -> list[SyncEvent | Notice]:
        events: list[SyncEvent | Notice] = []
        for conflict, local_sha, remote_sha in pulled.conflicts:
            record = ConflictRecord(
                file=conflict.file,
                local_sha=local_sha,
                remote_sha=remote_sha,
                side_file=side_file_for(conflict.file),
                diff=conflict.diff,
                remote_missing=conflict.remote_text is None,
                held=conflict.held,
                local_only=list(conflict.local_only),
                remote_only=list(conflict.remote_only),
                local_missing=conflict.local_text is None,
            )
            waiting = find_conflict(self.root, conflict.file)
            if waiting is not None and waiting.held and record.held:
                record = waiting.joined(record)
            save_conflict(self.root, record, conflict.remote_text or b"")
            events.append(
                SyncConflict(
                    file=record.file,
                    diff=record.diff,
                    local_sha=local_sha,
                    remote_sha=remote_sha,
                    side_file=record.side_file,
                )
            )
        pulled.conflicts.clear()
        return events

    # --- the repository ------------------------------------------------------------------------

    def _prepare(self) -> list[str]:
        """Ready the repository for a merge (the caller holds the lock); returns the files
        edited outside Cairn that were committed first."""
        ensure_ignored(self.root, self._gitdir())
        ensure_attributes(self.root, self._git)
        return commit_outside_edits(self._git)

    def _url(self) -> str | None:
        done = self._git.run(["remote", "get-url", REMOTE], check=False)
        return done.stdout.strip() or None if done.code == 0 else None

    def _tracked(self, state: SavedState) -> str:
        """The remote branch this workspace syncs with: the recorded one, else (a workspace
        synced before it was recorded, or one not joined yet) the local branch's name."""
        return state.branch or self._branch()

    def _branch(self) -> str:
        try:
            head = (self._gitdir() / "HEAD").read_text(encoding="utf-8").strip()
        except OSError:
            head = ""
        return (
            head.removeprefix("ref: refs/heads/") if head.startswith("ref: refs/heads/") else "main"
        )

    def _gitdir(self) -> Path:
        if self._git_dir is None:
            self._git_dir = Path(self._git.out("rev-parse", "--absolute-git-dir"))
        return self._git_dir

    def _now(self) -> datetime:
        moment = self._clock() if self._clock else datetime.now(UTC)
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)

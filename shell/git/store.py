"""One git commit per memory write, with a message that says why.

Every git command goes through the runner (`shell.git.runner`): never a prompt, never a hook.
A commit is plumbing: `git add --force` of the paths, `git write-tree`, compared with the tree
of HEAD (an identical tree makes no empty commit), `git commit-tree` with the injected author,
committer and date (so it never depends on the host's git identity, feasibility.md §6), then
`git update-ref HEAD <new> <old>`, which refuses if HEAD moved meanwhile.

A stale lock a killed git left behind is removed and reported; a fresh one makes the commit fail
with a clear reason. `.git/index.lock` is stale after `stale_lock_s` (an interactive `git
commit` holds it while its editor is open); the ref and reflog locks a commit takes
(`HEAD.lock`, `refs/heads/main.lock`, `logs/…/main.lock`) after `stale_ref_lock_s`, since git
holds them only for the instant of the update.

A failed `git add` is never followed by a commit.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from shell.events import GitLockCleared
from shell.git.lock import repo_lock
from shell.git.runner import Git, GitFailure

_FIELD = "\x1f"
_RECORD = "\x1e"


@dataclass(frozen=True)
class CommitOutcome:
    """What happened to one commit attempt. Never raised: failures are values."""

    sha: str | None
    """The new commit, or None when nothing changed or the commit failed."""
    error: str | None
    """Why the commit failed; None on success and when there was nothing to commit."""
    lock_cleared: GitLockCleared | None = None
    """Set when a stale `.git/index.lock` was removed before committing."""


@dataclass(frozen=True)
class CommitInfo:
    """One commit as shown in the git log pane."""

    sha: str
    short: str
    message: str
    when: str
    """Author date, ISO 8601."""
    files: list[str]
    machine: str = ""
    """Where it was made: the host part of the author's email (`cairn@<host>`)."""


class GitStore:
    """The workspace's git repository, seen as a log of memory writes.

    Args:
        root: The workspace root (the repository's working tree).
        author_name: Name used for author and committer of every commit.
        author_email: Email used for author and committer of every commit.
        clock: When given, supplies the author and commit dates (deterministic history).
        stale_lock_s: An `index.lock` older than this is assumed abandoned and removed.
        stale_ref_lock_s: The same for the locks of HEAD, branches and their reflogs.
    """

    def __init__(
        self,
        root: Path,
        *,
        author_name: str = "Cairn",
        author_email: str = "cairn@localhost",
        clock: Callable[[], datetime] | None = None,
        stale_lock_s: float = 30.0,
        stale_ref_lock_s: float = 2.0,
    ) -> None:
        self.root = Path(root).resolve()
        self.author_name = author_name
        self.author_email = author_email
        self.runner = Git(
            self.root, author_name=author_name, author_email=author_email, clock=clock
        )
        self._stale_lock_s = stale_lock_s
        self._stale_ref_lock_s = stale_ref_lock_s
        self.lock = repo_lock(self.root)
        self.on_commit: Callable[[str], object] | None = None
        """Called with each new commit's sha, from the committing thread (the sync's push)."""

    def exists(self) -> bool:
        return (self.root / ".git").exists()

    def ensure_repo(self) -> bool:
        """Create the repository (branch `main`) if it does not exist yet.

        Returns:
            True if a repository was created, False if one was already there.
        """
        with self.lock:
            return self._ensure_repo_locked()

    def commit(self, paths: Sequence[str], message: str) -> CommitOutcome:
        """Commit the current content of `paths` (workspace-relative) with `message`.

        Returns:
            The new sha; or sha=None, error=None when the content was already committed;
            or sha=None with `error` set when the commit could not be made.
        """
        if not paths:
            return CommitOutcome(sha=None, error="nothing to commit: no paths given")
        with self.lock:
            try:
                self._ensure_repo_locked()
            except (GitFailure, OSError) as error:
                return CommitOutcome(sha=None, error=f"git repository unavailable: {error}")
            lock_cleared, busy = self._clear_stale_locks()
            if busy is not None:
                return CommitOutcome(sha=None, error=busy, lock_cleared=lock_cleared)
            try:
                sha = self._stage_and_commit(paths, message)
            except GitFailure as failure:
                reason = f"git commit failed: {failure.message}"
                return CommitOutcome(sha=None, error=reason, lock_cleared=lock_cleared)
        if sha and self.on_commit is not None:
            self.on_commit(sha)
        return CommitOutcome(sha=sha, error=None, lock_cleared=lock_cleared)

    def committed(self, path: str) -> bytes | None:
        """The content of `path` (workspace-relative) in the last commit; None when the last
        commit does not hold it, or there is no commit or no repository yet."""
        if not self.exists():
            return None
        with self.lock:
            code, data = self.runner.run_bytes(
                ["cat-file", "blob", f"HEAD:{path}"], ok_codes=range(129)
            )
        return data if code == 0 else None  # 128: no such path, or no commit yet

    def log(self, limit: int = 20, path: str | None = None) -> list[CommitInfo]:
        """The newest `limit` commits, optionally only those touching `path`.

        Returns an empty list when there is no repository or no commit yet.
        """
        if not self.exists():
            return []
        command = [
            "log",
            f"--max-count={max(1, limit)}",
            f"--format={_RECORD}%H{_FIELD}%h{_FIELD}%aI{_FIELD}%ae{_FIELD}%B{_FIELD}",
            "--name-only",
        ]
        if path is not None:
            command += ["--", path]
        with self.lock:
            done = self.runner.run(command, check=False)
        if done.code != 0:
            return []  # no commits yet (unborn HEAD) or an unreadable repository
        return [_parse_log_record(record) for record in done.stdout.split(_RECORD) if record]

    def show(self, sha: str) -> CommitInfo | None:
        """One commit as the log shows it; None when `sha` names no commit."""
        if not self.exists():
            return None
        command = [
            "log",
            "-1",
            f"--format={_RECORD}%H{_FIELD}%h{_FIELD}%aI{_FIELD}%ae{_FIELD}%B{_FIELD}",
        ]
        with self.lock:
            done = self.runner.run([*command, "--name-only", sha, "--"], check=False)
        records = [r for r in done.stdout.split(_RECORD) if r] if done.code == 0 else []
        return _parse_log_record(records[0]) if records else None

    def line_times(self, path: str) -> list[datetime]:
        """When each line of `path` was last changed: its commit's author time, in the author's
        zone (a line not committed yet reads as now). [] without a repository or when git
        cannot blame the file."""
        if not self.exists():
            return []
        with self.lock:
            done = self.runner.run(["blame", "--line-porcelain", "--", path], check=False)
        return _line_times(done.stdout) if done.code == 0 else []

    # --- internals -------------------------------------------------------------------------

    def _ensure_repo_locked(self) -> bool:
        if self.exists():
            return False
        self.root.mkdir(parents=True, exist_ok=True)
        self.runner.out("init", "--quiet", "--initial-branch=main")
        return True

    def _clear_stale_locks(self) -> tuple[GitLockCleared | None, str | None]:
        """Remove the stale locks a commit would trip on; return (cleared event, busy reason)."""
        git_dir = self.root / ".git"
        locks = [(git_dir / "index.lock", self._stale_lock_s)] + [
            (lock, self._stale_ref_lock_s)
            for lock in (
                git_dir / "HEAD.lock",
                *(git_dir / "refs" / "heads").rglob("*.lock"),
                *(git_dir / "logs").rglob("*.lock"),
            )
        ]
        cleared: list[tuple[str, float]] = []
        for lock, stale_after in locks:
            try:
                age = time.time() - lock.stat().st_mtime
            except FileNotFoundError:
                continue
            relative = _relative_to(lock, self.root)
            if age < stale_after:
                return _cleared(cleared), (
                    f"git is busy: {relative} exists ({age:.1f} s old, younger than "
                    f"{stale_after:g} s), another git process may be running; "
                    "the file was written but not committed"
                )
            try:
                lock.unlink()
            except FileNotFoundError:
                continue  # its owner finished meanwhile
            cleared.append((relative, age))
        return _cleared(cleared), None

    def _stage_and_commit(self, paths: Sequence[str], message: str) -> str | None:
        self._stage(paths)  # raises: a failed add is never followed by a commit
        tree = self.runner.out("write-tree")
        last = self.runner.run(["rev-parse", "HEAD", "HEAD^{tree}"], check=False)
        parent, last_tree = last.stdout.split() if last.code == 0 else (None, None)
        if last_tree == tree:
            return None
        command = ["commit-tree", "--no-gpg-sign", tree, *(["-p", parent] if parent else [])]
        identity = self.runner.identity_env()
        sha = self.runner.run(command, stdin=message, env=identity).stdout.strip()
        subject = message.partition("\n")[0]
        self.runner.run(["update-ref", "-m", f"commit: {subject}", "HEAD", sha, parent or ""])
        return sha

    def _stage(self, paths: Sequence[str]) -> None:
        """`git add` what is on disk; a path no longer there is staged as removed if the last
        commit holds it (a revert of the commit that made it), else it is an error."""
        present = [path for path in paths if (self.root / path).exists()]
        gone = [path for path in paths if path not in present]
        if present:  # --force: committed even if a user-level ignore rule matches them
            self.runner.run(["add", "--force", "--", *present])
        if not gone:
            return
        listed = self.runner.run(["ls-tree", "--name-only", "HEAD", "--", *gone], check=False)
        if unknown := sorted(set(gone) - set(listed.stdout.splitlines())):
            raise GitFailure("error", f"git add: no such file: {', '.join(unknown)}")
        self.runner.run(["rm", "--cached", "--quiet", "--ignore-unmatch", "--", *gone])


def _line_times(porcelain: str) -> list[datetime]:
    times: list[datetime] = []
    stamp, zone = 0, "+0000"
    for line in porcelain.splitlines():
        if line.startswith("author-time "):
            stamp = int(line.split()[1])
        elif line.startswith("author-tz "):
            zone = line.split()[1]
        elif line.startswith("\t"):
            offset = timedelta(hours=int(zone[1:3]), minutes=int(zone[3:5]))
            tz = timezone(-offset if zone.startswith("-") else offset)
            times.append(datetime.fromtimestamp(stamp, tz))
    return times


def _cleared(locks: list[tuple[str, float]]) -> GitLockCleared | None:
    if not locks:
        return None
    return GitLockCleared(
        path=", ".join(path for path, _ in locks), age_s=round(max(age for _, age in locks), 1)
    )


def _relative_to(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _parse_log_record(record: str) -> CommitInfo:
    sha, short, when, email, body, names = (record.split(_FIELD) + [""] * 6)[:6]
    files = [line for line in names.splitlines() if line.strip()]
    machine = email.partition("@")[2]
    return CommitInfo(sha, short, body.strip(), when, files, machine)

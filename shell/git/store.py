"""One git commit per memory write, with a message that says why.

Staging goes through the git CLI (`git add`), because GitPython's `index.add` changes the
process-wide working directory while it runs, which is unsafe next to other threads. The commit
itself is made with GitPython's `index.commit` and an explicit `git.Actor` for author and
committer, so it never depends on the host's git identity (feasibility.md §6).

A stale lock a killed git left behind is removed and reported; a fresh one makes the commit fail
with a clear reason. `.git/index.lock` is stale after `stale_lock_s` (an interactive `git
commit` holds it while its editor is open); the ref and reflog locks a commit takes
(`HEAD.lock`, `refs/heads/main.lock`, `logs/…/main.lock`) after `stale_ref_lock_s`, since git
holds them only for the instant of the update (a kill in GitPython's commit left
`logs/refs/heads/main.lock`, and every later commit failed, before this).

A failed `git add` is never followed by a commit: GitPython would happily commit its in-memory
index without the intended change.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from shell.events import GitLockCleared

if TYPE_CHECKING:
    import git

_FIELD = "\x1f"
_RECORD = "\x1e"

_commit_locks: dict[Path, threading.Lock] = {}
_commit_locks_guard = threading.Lock()


def _commit_lock_for(root: Path) -> threading.Lock:
    """One lock per repository, shared by every GitStore in this process."""
    with _commit_locks_guard:
        return _commit_locks.setdefault(root, threading.Lock())


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
        self._clock = clock
        self._stale_lock_s = stale_lock_s
        self._stale_ref_lock_s = stale_ref_lock_s
        self._lock = _commit_lock_for(self.root)
        self._repo: git.Repo | None = None
        self.on_commit: Callable[[str], object] | None = None
        """Called with each new commit's sha, from the committing thread (the sync's push)."""

    def ensure_repo(self) -> bool:
        """Create the repository (branch `main`) if it does not exist yet.

        Returns:
            True if a repository was created, False if one was already there.
        """
        with self._lock:
            return self._ensure_repo_locked()

    def commit(self, paths: Sequence[str], message: str) -> CommitOutcome:
        """Commit the current content of `paths` (workspace-relative) with `message`.

        Returns:
            The new sha; or sha=None, error=None when the content was already committed;
            or sha=None with `error` set when the commit could not be made.
        """
        if not paths:
            return CommitOutcome(sha=None, error="nothing to commit: no paths given")
        with self._lock:
            try:
                self._ensure_repo_locked()
                repo = self._open()
            except Exception as error:
                return CommitOutcome(sha=None, error=f"git repository unavailable: {error}")
            lock_cleared, busy = self._clear_stale_locks(repo)
            if busy is not None:
                return CommitOutcome(sha=None, error=busy, lock_cleared=lock_cleared)
            try:
                sha = self._stage_and_commit(repo, paths, message)
            except Exception as error:
                return CommitOutcome(
                    sha=None, error=_describe_git_error(error), lock_cleared=lock_cleared
                )
            finally:
                _release(repo)
        if sha and self.on_commit is not None:
            self.on_commit(sha)
        return CommitOutcome(sha=sha, error=None, lock_cleared=lock_cleared)

    def committed(self, path: str) -> bytes | None:
        """The content of `path` (workspace-relative) in the last commit; None when the last
        commit does not hold it, or there is no commit or no repository yet."""
        with self._lock:
            if not (self.root / ".git").exists():
                return None
            repo = self._open()
            try:
                if not repo.head.is_valid():
                    return None
                data: bytes = (repo.head.commit.tree / path).data_stream.read()
            except KeyError:  # not in the last commit
                return None
            finally:
                _release(repo)
            return data

    def log(self, limit: int = 20, path: str | None = None) -> list[CommitInfo]:
        """The newest `limit` commits, optionally only those touching `path`.

        Returns an empty list when there is no repository or no commit yet.
        """
        if not (self.root / ".git").exists():
            return []
        command = [
            "git",
            "-c",
            "core.quotePath=false",
            "log",
            f"--max-count={max(1, limit)}",
            f"--format={_RECORD}%H{_FIELD}%h{_FIELD}%aI{_FIELD}%ae{_FIELD}%B{_FIELD}",
            "--name-only",
        ]
        if path is not None:
            command += ["--", path]
        with self._lock:
            try:
                output = self._open().git.execute(command, strip_newline_in_stdout=False)
            except Exception:
                return []  # no commits yet (unborn HEAD) or an unreadable repository
        return [_parse_log_record(record) for record in str(output).split(_RECORD) if record]

    def line_times(self, path: str) -> list[datetime]:
        """When each line of `path` was last changed: its commit's author time, in the author's
        zone (a line not committed yet reads as now). [] without a repository or when git
        cannot blame the file."""
        if not (self.root / ".git").exists():
            return []
        command = ["git", "blame", "--line-porcelain", "--", path]
        with self._lock:
            try:
                output = str(self._open().git.execute(command, strip_newline_in_stdout=False))
            except Exception:
                return []
        times: list[datetime] = []
        stamp, zone = 0, "+0000"
        for line in output.splitlines():
            if line.startswith("author-time "):
                stamp = int(line.split()[1])
            elif line.startswith("author-tz "):
                zone = line.split()[1]
            elif line.startswith("\t"):
                offset = timedelta(hours=int(zone[1:3]), minutes=int(zone[3:5]))
                tz = timezone(-offset if zone.startswith("-") else offset)
                times.append(datetime.fromtimestamp(stamp, tz))
        return times

    # --- internals -------------------------------------------------------------------------

    def _ensure_repo_locked(self) -> bool:
        if (self.root / ".git").exists():
            return False  # without importing GitPython: start-up needs no more
        import git

        self.root.mkdir(parents=True, exist_ok=True)
        self._repo = git.Repo.init(self.root, initial_branch="main")
        return True

    def _open(self) -> git.Repo:
        import git

        if self._repo is None:
            self._repo = git.Repo(self.root)
        return self._repo

    def _clear_stale_locks(self, repo: git.Repo) -> tuple[GitLockCleared | None, str | None]:
        """Remove the stale locks a commit would trip on; return (cleared event, busy reason)."""
        git_dir = Path(repo.git_dir)
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

    def _stage_and_commit(self, repo: git.Repo, paths: Sequence[str], message: str) -> str | None:
        import git

        # --force: memory files are committed even if a user-level ignore rule matches them.
        repo.git.add("--force", "--", *paths)  # raises on failure; we then never commit
        index = repo.index  # a fresh IndexFile, read from disk after the CLI add
        tree = index.write_tree()
        if repo.head.is_valid() and repo.head.commit.tree.binsha == tree.binsha:
            return None
        actor = git.Actor(self.author_name, self.author_email)
        when = self._commit_date()
        commit = index.commit(
            message,
            author=actor,
            committer=actor,
            author_date=when,
            commit_date=when,
            skip_hooks=True,
        )
        return str(commit.hexsha)

    def _commit_date(self) -> datetime | None:
        if self._clock is None:
            return None
        moment = self._clock()
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _release(repo: git.Repo) -> None:
    """End the `git cat-file` processes GitPython keeps for reading objects: each holds pipes
    open until the Repo is collected, and a long session (or test run) ran out of descriptors
    (select() refuses a descriptor past 1024)."""
    repo.git.clear_cache()


def _describe_git_error(error: Exception) -> str:
    stderr = getattr(error, "stderr", None)
    if isinstance(stderr, str) and stderr.strip():
        detail = " ".join(stderr.strip().split())
        return f"git commit failed: {detail.removeprefix('stderr: ').strip(chr(39))}"
    return f"git commit failed: {type(error).__name__}: {error}"


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

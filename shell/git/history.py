"""The memory's history: its commits, the diff of one, and the revert of one as a new commit.

Every memory write is one commit (`shell.git.store`), whose message says why
(`memory(<reason>): …`, an outside edit, the workspace seed) and, for a turn's write, where it
came from (`session <id> turn <n>` in its body). This module reads that back for the history view
and `cairn history`, and undoes one commit the way `git revert --no-edit` does: a new commit,
never a rewrite. A revert holds the same locks as a memory write (the `flock` on
`.cairn/locks/memory.lock`, then the repository's commit lock), so it never interleaves with a
tool's write; one that no longer applies is aborted, leaves the tree as it was and says why.
The index notices the reverted files on its own: a search re-syncs a dirty index first, and the
watcher sees the change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from shell.fsio import exclusive_lock
from shell.git.store import CommitInfo, GitStore, _commit_lock_for

if TYPE_CHECKING:
    import git

_ORIGIN = re.compile(r"\bsession (?P<session>\S+) turn (?P<turn>\d+)\b")
_REASON = re.compile(r"^memory\((?P<reason>[a-z]+)\):")
_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


@dataclass(frozen=True)
class HistoryCommit:
    """One commit of the workspace, as the history view shows it."""

    sha: str
    short: str
    when: datetime
    subject: str
    kind: str
    """Why it was made: tool, flush, dream, user edit, outside edit, seed, revert or other."""
    session: str | None
    turn: int | None
    files: list[str] = field(default_factory=list)
    body: str = ""

    @property
    def message(self) -> str:
        return self.subject if not self.body else f"{self.subject}\n\n{self.body}"

    def as_json(self) -> dict[str, object]:
        return {
            "sha": self.sha,
            "when": self.when.isoformat(),
            "kind": self.kind,
            "subject": self.subject,
            "session": self.session,
            "turn": self.turn,
            "files": self.files,
        }


@dataclass(frozen=True)
class RevertPreview:
    """What reverting a commit would change, before it is made."""

    sha: str
    diff: str
    """The reverse diff: what the revert commit will hold."""
    applies: bool
    reason: str | None = None
    """Why it would not apply; None when it would."""


@dataclass(frozen=True)
class RevertOutcome:
    """The result of one revert. Never raised: a refusal is a value."""

    sha: str | None
    """The new commit; None when the revert was refused."""
    reverted: str
    files: list[str] = field(default_factory=list)
    error: str | None = None


def commit_kind(subject: str) -> str:
    """The kind of a commit, from its subject line."""
    if match := _REASON.match(subject):
        reason = match["reason"]
        return "user edit" if reason == "user" else reason
    if subject.startswith("edit made outside Cairn"):
        return "outside edit"
    if subject.startswith("edit by the user"):  # files.USER_EDIT: the TUI's $EDITOR key
        return "user edit"
    if subject.startswith("workspace:"):
        return "seed"
    if subject.startswith("Revert "):
        return "revert"
    return "other"


class MemoryHistory:
    """The workspace's commits, read and reverted.

    Args:
        root: The workspace root (the repository's working tree).
        author_name: Author and committer of a revert commit.
        author_email: Their email.
    """

    def __init__(
        self, root: Path, *, author_name: str = "Cairn", author_email: str = "cairn@localhost"
    ) -> None:
        self.root = Path(root).resolve()
        self.author_name = author_name
        self.author_email = author_email
        self._lock = _commit_lock_for(self.root)

    def commits(self, limit: int = 50) -> list[HistoryCommit]:
        """The newest `limit` commits, newest first; [] without a repository or commit."""
        return [_history_commit(info) for info in GitStore(self.root).log(limit)]

    def diff(self, sha: str) -> str:
        """The unified diff `sha` made (against its parent; a first commit against nothing)."""
        with self._lock:
            return self._show(self._repo(), sha, reverse=False)

    def preview_revert(self, sha: str) -> RevertPreview:
        """The reverse diff of `sha`, and whether it still applies to the working tree."""
        with self._lock:
            repo = self._repo()
            full = self._resolve(repo, sha)
            diff = self._show(repo, full, reverse=True)
            if not diff.strip():
                return RevertPreview(full, diff, False, "the commit changed nothing to revert")
            try:
                _check_applies(repo, diff)
            except Exception as error:
                return RevertPreview(full, diff, False, _no_longer_applies(error))
            return RevertPreview(full, diff, True)

    def revert(self, sha: str) -> RevertOutcome:
        """Revert `sha` as a new commit, under the memory write locks.

        A revert that no longer applies (a later write changed the same lines) is aborted:
        the working tree and the index stay as they were, and `error` says why.
        """
        with exclusive_lock(self.root / ".cairn" / "locks" / "memory.lock"), self._lock:
            try:
                repo = self._repo()
                full = self._resolve(repo, sha)
            except Exception as error:
                return RevertOutcome(None, sha, error=f"no such commit: {sha} ({_detail(error)})")
            if repo.is_dirty(index=True, working_tree=True, untracked_files=False):
                return RevertOutcome(
                    None, full, error="the workspace has uncommitted changes; nothing was changed"
                )
            head = repo.head.commit.hexsha
            try:
                repo.git.execute(
                    [
                        "git",
                        "-c",
                        f"user.name={self.author_name}",
                        "-c",
                        f"user.email={self.author_email}",
                        "-c",
                        "core.hooksPath=/dev/null",
                        "revert",
                        "--no-edit",
                        full,
                    ]
                )
            except Exception as error:
                self._abort(repo, head)
                return RevertOutcome(None, full, error=_no_longer_applies(error))
            new = repo.head.commit
            files = [str(path) for path in new.stats.files]
            return RevertOutcome(str(new.hexsha), full, files=files)

    # --- internals -------------------------------------------------------------------------

    def _repo(self) -> git.Repo:
        import git

        return git.Repo(self.root)

    @staticmethod
    def _resolve(repo: git.Repo, sha: str) -> str:
        return str(repo.commit(sha).hexsha)

    @staticmethod
    def _show(repo: git.Repo, sha: str, *, reverse: bool) -> str:
        commit = repo.commit(sha)
        parent = commit.parents[0].hexsha if commit.parents else _EMPTY_TREE
        old, new = (commit.hexsha, parent) if reverse else (parent, commit.hexsha)
        command = ["git", "-c", "core.quotePath=false", "diff", "--no-color", old, new]
        return str(repo.git.execute(command, strip_newline_in_stdout=False))

    @staticmethod
    def _abort(repo: git.Repo, head: str) -> None:
        """Undo a revert that stopped half-way: the tree and index back to `head`."""
        try:
            repo.git.execute(["git", "revert", "--abort"])
        except Exception:
            repo.git.execute(["git", "reset", "--hard", "--quiet", head])


def _history_commit(info: CommitInfo) -> HistoryCommit:
    subject, _, body = info.message.partition("\n")
    origin = _ORIGIN.search(info.message)
    return HistoryCommit(
        sha=info.sha.strip(),
        short=info.short,
        when=datetime.fromisoformat(info.when),
        subject=subject.strip(),
        kind=commit_kind(subject),
        session=origin["session"] if origin else None,
        turn=int(origin["turn"]) if origin else None,
        files=info.files,
        body=body.strip(),
    )


def _check_applies(repo: git.Repo, diff: str) -> None:
    """Raise when `diff` does not apply to the working tree (`git apply --check`)."""
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".patch", encoding="utf-8") as patch:
        patch.write(diff)
        patch.flush()
        repo.git.execute(["git", "apply", "--check", patch.name])


def _detail(error: Exception) -> str:
    stderr = getattr(error, "stderr", None)
    text = stderr if isinstance(stderr, str) and stderr.strip() else str(error)
    text = text.replace("stderr:", "").strip().strip("'")
    lines = [line for line in text.splitlines() if not line.strip().startswith("hint:")]
    return " ".join(" ".join(lines).split())


def _no_longer_applies(error: Exception) -> str:
    return (
        "the commit no longer applies cleanly (a later write changed the same lines); "
        f"nothing was changed: {_detail(error)}"
    )

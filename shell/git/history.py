"""The memory's history: its commits, the diff of one, and the revert of one as a new commit.

Every memory write is one commit (`shell.git.store`), whose message says why
(`memory(<reason>): …`, an outside edit, the workspace seed) and, for a turn's write, where it
came from (`session <id> turn <n>` in its body). This module reads that back for the history view
and `cairn history`, and undoes one commit the way `git revert --no-edit` does: a new commit,
never a rewrite, made through the store (`GitStore.commit`) so the sync hears of it. A revert
holds the same locks as a memory write (the `flock` on `.cairn/locks/memory.lock`, then the
repository's lock, `shell.git.lock`), so it never interleaves with a tool's write; one that no
longer applies is aborted, leaves the tree as it was and says why.
The index notices the reverted files on its own: a search re-syncs a dirty index first, and the
watcher sees the change.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from shell.events import Event, MemoryWritten, Notice
from shell.fsio import exclusive_lock
from shell.git.runner import GitFailure, one_line
from shell.git.store import CommitInfo, GitStore
from shell.text import short_sha

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
    written: list[MemoryWritten] = field(default_factory=list)
    """One event per file the revert changed, with the revert's commit."""


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
    """The workspace's commits, read and reverted, through its store (`GitStore`): a revert is
    a commit of the store, so whatever listens to its commits (the sync's push) hears of it.

    Args:
        store: The workspace's store; or its root, for a store of the default identity.
    """

    def __init__(self, store: GitStore | Path) -> None:
        self.store = store if isinstance(store, GitStore) else GitStore(Path(store))
        self.root = self.store.root
        self._git = self.store.runner

    def commits(self, limit: int = 50) -> list[HistoryCommit]:
        """The newest `limit` commits, newest first; [] without a repository or commit."""
        return [_history_commit(info) for info in self.store.log(limit)]

    def diff(self, sha: str) -> str:
        """The unified diff `sha` made (against its parent; a first commit against nothing)."""
        with self.store.lock:
            return self._show(self._resolve(sha), reverse=False)

    def preview_revert(self, sha: str) -> RevertPreview:
        """The reverse diff of `sha`, and whether it still applies to the working tree.

        Raises:
            GitFailure: `sha` names no commit.
        """
        with self.store.lock:
            full = self._resolve(sha)
            diff = self._show(full, reverse=True)
            if not diff.strip():
                return RevertPreview(full, diff, False, "the commit changed nothing to revert")
            check = self._git.run(["apply", "--check"], stdin=diff, check=False)
            if check.code != 0:
                return RevertPreview(full, diff, False, _no_longer_applies(check.stderr))
            return RevertPreview(full, diff, True)

    def revert(self, sha: str) -> RevertOutcome:
        """Revert `sha` as a new commit of the store, under the memory write locks.

        A revert that no longer applies (a later write changed the same lines) is aborted:
        the working tree and the index stay as they were, and `error` says why.
        """
        with exclusive_lock(self.root / ".cairn" / "locks" / "memory.lock"), self.store.lock:
            try:
                full = self._resolve(sha)
            except GitFailure as failure:
                return RevertOutcome(None, sha, error=failure.message)
            if self._git.out("status", "--porcelain", "--untracked-files=no"):
                return RevertOutcome(
                    None, full, error="the workspace has uncommitted changes; nothing was changed"
                )
            head = self._git.out("rev-parse", "HEAD")
            # A merge (a sync's) is undone against its first parent, as the preview shows it.
            mainline = ["-m", "1"] if self._git.rev(f"{full}^2") else []
            undo = ["revert", "--no-commit", *mainline, full]
            if (done := self._git.run(undo, check=False)).code:
                self._abort(head)
                return RevertOutcome(None, full, error=_no_longer_applies(done.stderr))
            files = self._git.out("diff", "--cached", "--name-only", "HEAD").splitlines()
            self._git.run(["revert", "--quit"])
            outcome = self.store.commit(files, self._message(full))
            if outcome.sha is None:
                self._abort(head)
                error = outcome.error or "the revert changed nothing"
                return RevertOutcome(None, full, error=f"{error}; nothing was changed")
            written = self._written(head, outcome.sha)
            return RevertOutcome(outcome.sha, full, files=files, written=written)

    # --- internals -------------------------------------------------------------------------

    def _resolve(self, sha: str) -> str:
        full = self._git.rev(sha)
        if full is None:
            raise GitFailure("error", f"no such commit: {sha}")
        return full

    def _show(self, sha: str, *, reverse: bool) -> str:
        parent = self._git.rev(f"{sha}^") or _EMPTY_TREE
        old, new = (sha, parent) if reverse else (parent, sha)
        return self._git.run(["diff", "--no-color", old, new]).stdout

    def _message(self, sha: str) -> str:
        """What `git revert --no-edit` would say."""
        subject = self._git.out("log", "-1", "--format=%s", sha)
        return f'Revert "{subject}"\n\nThis reverts commit {sha}.\n'

    def _written(self, head: str, new: str) -> list[MemoryWritten]:
        """A `MemoryWritten` per file commit `new` changed (on top of `head`)."""
        written = []
        for line in self._git.out("diff", "--numstat", head, new).splitlines():
            added, _, path = line.split("\t", 2)
            file = self.root / path
            size = file.stat().st_size if file.is_file() else 0
            lines = int(added) if added.isdigit() else 0  # "-": a binary file
            written.append(MemoryWritten(path, size, new, "revert", lines_added=lines))
        return written

    def _abort(self, head: str) -> None:
        """Undo a revert that stopped half-way: the tree and index back to `head`."""
        if self._git.run(["revert", "--abort"], check=False).code != 0:
            self._git.run(["reset", "--hard", "--quiet", head], check=False)


async def revert_events(history: MemoryHistory, sha: str) -> AsyncGenerator[Event]:
    """The revert of `sha` (run off the event loop) as events: a `MemoryWritten` per file it
    changed, or an error notice of why nothing changed."""
    outcome = await asyncio.to_thread(history.revert, sha)
    if outcome.sha is None:
        yield Notice(f"{short_sha(sha)} not reverted: {outcome.error}", "error")
        return
    for event in outcome.written:
        yield event


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


def _no_longer_applies(stderr: str) -> str:
    return (
        "the commit no longer applies cleanly (a later write changed the same lines); "
        f"nothing was changed: {one_line(stderr)}"
    )

"""The memory's history: its commits, the diff of one, and the revert of one as a new commit.

Every memory write is one commit (`shell.git.store`), whose message says why
(`memory(<reason>): …`, an outside edit, the workspace seed) and, for a turn's write, where it
came from (`session <id> turn <n>` in its body). This module reads that back for the history view
and `cairn history`, and undoes one commit the way `git revert --no-edit` does: a new commit,
never a rewrite, made through the store (`GitStore.commit`) so the sync hears of it. A revert
holds the same locks as a memory write (the `flock` on `.cairn/locks/memory.lock`, then the
repository's lock, `shell.git.lock`), so it never interleaves with a tool's write; one that no
longer applies is aborted, leaves the tree as it was and says why, naming the later write in the
way when it can.
A daily note is append-only, so what a commit only added to one is undone line by line
(`shell.git.note_undo`): those lines go, whatever was appended since. Every other file (and a
note whose lines the commit changed) takes git's revert; a commit of both kinds is reverted
whole or not at all.
The index notices the reverted files on its own: a search re-syncs a dirty index first, and the
watcher sees the change.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from shell.events import Event, MemoryWritten, Notice
from shell.fsio import exclusive_lock, write_atomically
from shell.git.history_commit import HistoryCommit, commit_kind, history_commit
from shell.git.note_undo import NoteUndo, added_lines, is_daily_note, undo_diff, undo_lines
from shell.git.runner import GitFailure, one_line
from shell.git.store import GitStore
from shell.text import short_sha

__all__ = ["HistoryCommit", "MemoryHistory", "RevertOutcome", "RevertPreview", "commit_kind"]

REVERT_JOURNAL = Path(".cairn") / "revert.json"  # while a revert is under way (`recover`)
MEMORY_LOCK = Path(".cairn") / "locks" / "memory.lock"
_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_PICKAXE_LINES = 5
"""How many of a commit's lines are looked for in later commits, to name the one that
changed them."""


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


@dataclass
class _Plan:
    """How a revert undoes each file of its commit."""

    notes: list[NoteUndo] = field(default_factory=list)
    """Daily notes the commit only added lines to: those lines go, one by one."""
    strict: list[str] = field(default_factory=list)
    """Every other file: git's revert."""


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
        return [history_commit(info) for info in self.store.log(limit)]

    def diff(self, sha: str) -> str:
        """The unified diff `sha` made (against its parent; a first commit against nothing)."""
        with self.store.lock:
            return self._show(self._resolve(sha), reverse=False)

    def preview_revert(self, sha: str) -> RevertPreview:
        """What reverting `sha` would change (the lines a daily note loses, the reverse diff of
        every other file), and whether it still applies to the working tree.

        Raises:
            GitFailure: `sha` names no commit.
        """
        with self.store.lock:
            full = self._resolve(sha)
            plan = self._plan(full)
            if refused := self._refusal(full, plan):
                return RevertPreview(full, self._show(full, reverse=True), False, refused)
            strict = self._show(full, reverse=True, paths=plan.strict) if plan.strict else ""
            diff = strict + "".join(undo_diff(note) for note in plan.notes)
            if not diff.strip():
                return RevertPreview(full, diff, False, "the commit changed nothing to revert")
            check = (
                self._git.run(["apply", "--check"], stdin=strict, check=False) if strict else None
            )
            if check is not None and check.code:
                reason = self._no_longer_applies(full, plan.strict, check.stderr)
                return RevertPreview(full, diff, False, reason)
            return RevertPreview(full, diff, True)

    def revert(self, sha: str) -> RevertOutcome:
        """Revert `sha` as a new commit of the store, under the memory write locks.

        The lines `sha` only added to a daily note are removed from it one by one
        (`shell.git.note_undo`); every other file takes git's revert. A revert that no longer
        applies (a later write changed the same lines of a curated file, or a line the commit
        added to a note is gone) is refused whole: the working tree and the index stay as they
        were, and `error` says why and names the later write when it can.
        """
        with exclusive_lock(self.root / MEMORY_LOCK), self.store.lock:
            try:
                full = self._resolve(sha)
            except GitFailure as failure:
                return RevertOutcome(None, sha, error=failure.message)
            if self._git.out("status", "--porcelain", "--untracked-files=no"):
                return RevertOutcome(
                    None, full, error="the workspace has uncommitted changes; nothing was changed"
                )
            head = self._git.out("rev-parse", "HEAD")
            plan = self._plan(full)
            if refused := self._refusal(full, plan):
                return RevertOutcome(None, full, error=refused)
            journal = self.root / REVERT_JOURNAL
            write_atomically(journal, json.dumps({"head": head, "sha": full}))
            try:
                return self._revert(full, plan, head)
            except BaseException:
                if self._git.out("rev-parse", "HEAD") == head:  # not once the commit is made
                    self._abort(head)
                raise
            finally:
                journal.unlink(missing_ok=True)

    def recover(self) -> list[Event]:
        """At start-up: undo a revert a kill cut short before its commit (the tree and index back
        to HEAD, which still holds every committed line), and say so."""
        journal = self.root / REVERT_JOURNAL
        if not journal.exists():
            return []
        with exclusive_lock(self.root / MEMORY_LOCK), self.store.lock:
            try:
                noted = json.loads(journal.read_text(encoding="utf-8"))
                head, sha = str(noted["head"]), str(noted["sha"])
            except (OSError, ValueError, KeyError, TypeError):
                head, sha = "", ""
            undone = bool(head) and self._git.out("rev-parse", "HEAD") == head
            if undone:
                self._abort(head)
            journal.unlink(missing_ok=True)
        message = f"A revert of {short_sha(sha)} was interrupted before its commit: the memory "
        message += "files are back as they were and nothing was reverted; run it again"
        return [Notice(message, level="warning")] if undone else []

    def _revert(self, full: str, plan: _Plan, head: str) -> RevertOutcome:
        notes = {note.path for note in plan.notes}
        by_git = bool(plan.strict) or not notes
        if by_git and (refused := self._git_revert(full, plan, head)):
            return RevertOutcome(None, full, error=refused)
        if refused := self._undo_notes(plan, head, by_git=by_git):
            return RevertOutcome(None, full, error=refused)
        staged = self._git.out("diff", "--cached", "--name-only", "HEAD").splitlines()
        files = sorted({*staged, *notes})
        if by_git:
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

    def _show(self, sha: str, *, reverse: bool, paths: Sequence[str] = ()) -> str:
        parent = self._git.rev(f"{sha}^") or _EMPTY_TREE
        old, new = (sha, parent) if reverse else (parent, sha)
        limit = ["--", *paths] if paths else []
        return self._git.run(["diff", "--no-color", "--no-renames", old, new, *limit]).stdout

    def _plan(self, sha: str) -> _Plan:
        """Which files of `sha` are undone line by line (a daily note it only added lines
        to), and which by git's revert (the rest). A merge is read against its first parent."""
        parent = self._git.rev(f"{sha}^") or _EMPTY_TREE
        names = self._git.out("diff", "--name-only", "--no-renames", parent, sha).splitlines()
        plan = _Plan()
        for path in names:
            diff = self._git.run(
                ["diff", "--no-color", "--no-renames", "-U0", parent, sha, "--", path]
            ).stdout
            added = added_lines(diff) if is_daily_note(path) else None
            if added is None:
                plan.strict.append(path)
                continue
            file = self.root / path  # as it is now: what the preview's reader sees
            current = file.read_bytes().decode("utf-8", "surrogateescape") if file.is_file() else ""
            created = "\n--- /dev/null\n" in diff
            plan.notes.append(undo_lines(path, current, added, created=created))
        return plan

    def _refusal(self, sha: str, plan: _Plan) -> str | None:
        """Why the notes' part of the revert cannot be made: a line it added is gone."""
        for note in plan.notes:
            if note.missing:
                text = note.missing[0]
                later = self._later_writer(sha, [note.path], [text])
                by = f" (changed by {later})" if later else ""
                return (
                    f"{note.path} no longer holds the line {text!r} that the commit added{by}; "
                    "nothing was changed"
                )
        return None

    def _git_revert(self, sha: str, plan: _Plan, head: str) -> str | None:
        """`git revert --no-commit` of `sha`; why it was refused (and undone), or None. A
        conflict in a note undone line by line is no refusal: its lines are written after."""
        # A merge (a sync's) is undone against its first parent, as the preview shows it.
        mainline = ["-m", "1"] if self._git.rev(f"{sha}^2") else []
        done = self._git.run(["revert", "--no-commit", *mainline, sha], check=False)
        if not done.code:
            return None
        notes = {note.path for note in plan.notes}
        unmerged = self._git.out("diff", "--name-only", "--diff-filter=U").splitlines()
        if unmerged and not set(unmerged) - notes:
            return None
        reason = self._no_longer_applies(sha, unmerged or plan.strict, done.stderr)
        self._abort(head)
        return reason

    def _undo_notes(self, plan: _Plan, head: str, *, by_git: bool) -> str | None:
        """Apply each note's undo (the diff its preview shows) to the tree and the index; why
        not (everything undone then), or None."""
        try:
            for note in plan.notes:
                if by_git:  # git's own try at the note (perhaps a conflict) goes first
                    self._git.run(["checkout", "HEAD", "--", note.path])
                self._git.run(["apply", "--index"], stdin=undo_diff(note))
        except GitFailure as failure:
            self._abort(head)
            return f"the note's lines could not be removed; nothing was changed: {failure.message}"
        return None

    def _later_writer(self, sha: str, paths: Sequence[str], texts: Sequence[str] = ()) -> str:
        """The first commit after `sha` that changed one of the lines `sha` wrote in `paths`
        (found by git's pickaxe), as "<short> <subject>"; else the first later commit that
        touched `paths`; "" when there is none."""
        if not texts:
            parent = self._git.rev(f"{sha}^") or _EMPTY_TREE
            diff = self._git.run(["diff", "--no-color", "-U0", parent, sha, "--", *paths]).stdout
            texts = [
                row[1:]
                for row in diff.split("\n")
                if row.startswith(("+", "-")) and not row.startswith(("+++ ", "--- "))
                if row[1:].strip()
            ][:_PICKAXE_LINES]
        log = ["log", "--reverse", "--format=%h %s", f"{sha}..HEAD"]
        for text in texts:
            found = self._git.run([*log, f"-S{text}", "--", *paths], check=False).stdout
            if found.strip():
                return found.splitlines()[0]
        touched = self._git.run([*log, "--", *paths], check=False).stdout
        return touched.splitlines()[0] if touched.strip() else ""

    def _no_longer_applies(self, sha: str, paths: Sequence[str], stderr: str) -> str:
        later = self._later_writer(sha, paths)
        by = f": {later}" if later else ""
        return (
            f"the commit no longer applies cleanly (a later write changed the same lines{by}); "
            f"nothing was changed: {one_line(stderr)}"
        )

    def _message(self, sha: str) -> str:
        """What `git revert --no-edit` would say."""
        subject = self._git.out("log", "-1", "--format=%s", sha)
        return f'Revert "{subject}"\n\nThis reverts commit {sha}.\n'

    def _written(self, head: str, new: str) -> list[MemoryWritten]:
        """A `MemoryWritten` per file commit `new` changed (on top of `head`)."""
        written = []
        for line in self._git.out("diff", "--numstat", head, new).splitlines():
            added, removed, path = line.split("\t", 2)
            file = self.root / path
            size = file.stat().st_size if file.is_file() else 0
            plus, minus = (int(n) if n.isdigit() else 0 for n in (added, removed))  # "-": binary
            written.append(MemoryWritten(path, size, new, "revert", plus, lines_removed=minus))
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

"""Cleaning up after a killed sync, and settling the conflicts a sync left for review."""

from __future__ import annotations

import json
import time
from pathlib import Path

from shell.events.memory import MemoryWritten
from shell.events.sync import SyncEvent, SyncFailed, SyncRecovered, SyncResolved, Take
from shell.fsio import write_atomically
from shell.git.runner import Git, GitFailure
from shell.sync.merge import union_of
from shell.sync.prepare import commit_files
from shell.sync.pull import INCOMING, JOURNAL
from shell.sync.state import ConflictRecord, close_conflict, find_conflict

STALE_LOCK_S = 10.0
"""A git lock file older than this at start-up is taken as left by a killed git."""
_TAKES = ("local", "remote", "both")
RESOLVED = "Cairn-Resolved"
"""The trailer of a resolution's commit: the file and the side taken."""


def recover_repository(
    root: Path, git: Git, git_dir: Path, stale_lock_s: float = STALE_LOCK_S
) -> list[SyncEvent]:
    """Undo what an interrupted pull or merge left (the caller holds the commit lock): stale
    `.git` locks, a merge in progress (MERGE_HEAD, aborted: the tree goes back to HEAD), a merge
    of ours applied halfway (its files restored to HEAD), unmerged memory files."""
    done: list[str] = []
    cleared, busy = _clear_locks(git_dir, stale_lock_s)
    if cleared:
        done.append("removed stale lock files: " + ", ".join(cleared))
    if busy:
        done.append("left lock files that may be in use: " + ", ".join(busy))
    (git_dir / "cairn-sync-index").unlink(missing_ok=True)
    if (git_dir / "MERGE_HEAD").exists():
        unmerged = _unmerged(git)
        aborted = git.run(["merge", "--abort"], check=False).code == 0
        if not aborted:
            aborted = git.run(["reset", "--merge"], check=False).code == 0
        listed = f" ({', '.join(unmerged)} back to HEAD)" if unmerged else ""
        done.append(
            f"aborted a merge in progress{listed}"
            if aborted
            else "found a merge in progress that could not be aborted: run `git merge --abort`"
        )
    elif unmerged := _unmerged(git):
        _restore(git, unmerged)
        done.append(f"restored unmerged files to HEAD: {', '.join(unmerged)}")
    journal = root / JOURNAL
    if journal.exists():
        done.append(_finish_journal(git, journal))
    git.run(["update-ref", "-d", INCOMING], check=False)
    return [SyncRecovered(detail="; ".join(done))] if done else []


def _clear_locks(git_dir: Path, stale_lock_s: float) -> tuple[list[str], list[str]]:
    candidates = [
        *(git_dir / name for name in ("index.lock", "HEAD.lock", "ORIG_HEAD.lock")),
        *(git_dir / name for name in ("MERGE_HEAD.lock", "packed-refs.lock", "config.lock")),
        *(git_dir / "refs").rglob("*.lock"),
        *(git_dir / "logs").rglob("*.lock"),
    ]
    cleared, busy = [], []
    for lock in candidates:
        try:
            age = time.time() - lock.stat().st_mtime
        except FileNotFoundError:
            continue
        name = lock.relative_to(git_dir.parent).as_posix()
        if age < stale_lock_s:
            busy.append(name)
            continue
        lock.unlink(missing_ok=True)
        cleared.append(name)
    return cleared, busy


def _unmerged(git: Git) -> list[str]:
    output = git.run(["diff", "--name-only", "-z", "--diff-filter=U"], check=False).stdout
    return sorted({name for name in output.split("\0") if name})


def _restore(git: Git, files: list[str]) -> None:
    """Put `files` back as HEAD has them (a file HEAD lacks is removed)."""
    listed = git.run(["ls-tree", "-z", "--name-only", "HEAD", "--", *files], check=False).stdout
    in_head = [name for name in listed.split("\0") if name]
    if in_head:
        git.run(["checkout", "HEAD", "--", *in_head])
    for name in set(files) - set(in_head):
        git.run(["rm", "-q", "-f", "--cached", "--ignore-unmatch", "--", name], check=False)
        if git.root is not None:
            (git.root / name).unlink(missing_ok=True)


def _finish_journal(git: Git, journal: Path) -> str:
    """A merge of ours was being applied when the process died: bring the tree back to HEAD."""
    try:
        entry = json.loads(journal.read_text(encoding="utf-8"))
        old, new = str(entry["old"]), str(entry["new"])
    except (OSError, ValueError, KeyError, TypeError):
        journal.unlink(missing_ok=True)
        return "removed an unreadable merge journal"
    head = git.rev("HEAD")
    files = [
        name
        for name in git.run(["diff", "--name-only", "-z", old, new], check=False).stdout.split("\0")
        if name
    ]
    if files:
        _restore(git, files)
    journal.unlink(missing_ok=True)
    state = "was complete" if head == new else "was rolled back; the next sync merges again"
    return f"an interrupted sync merge {state} ({len(files)} file(s) checked against HEAD)"


def resolve_conflict(
    root: Path, git: Git, file: str, take: Take
) -> list[SyncEvent | MemoryWritten]:
    """Settle the open conflict of `file` with the `take` side (the caller holds the commit
    lock). The file holds both sides' lines while it waits: local removes the lines only the
    remote had, remote the lines only the local side had, both keeps it. A new commit unless
    nothing changes (its `Cairn-Resolved` trailer tells the other machines which lines went),
    said as a `MemoryWritten` of the file before the `SyncResolved`."""
    if take not in _TAKES:
        return [SyncFailed(kind="error", message=f"take must be one of {', '.join(_TAKES)}")]
    record = find_conflict(root, file)
    if record is None:
        return [SyncFailed(kind="conflict", message=f"{file} has no open conflict")]
    path = root / record.file
    local = path.read_bytes() if path.is_file() else None
    try:
        remote = None if record.remote_missing else (root / record.side_file).read_bytes()
    except OSError:
        return [SyncFailed(kind="error", message=f"the remote side of {file} is missing")]
    if record.held:
        chosen = _settled(record, local, take)
        if take == "remote" and chosen and remote and _same_lines(chosen, remote):
            chosen = remote  # nothing written since: the remote's version, in its order
    else:  # a record from before the merge held both sides: the file is the local version
        chosen = local if take == "local" else remote if take == "remote" else _both(local, remote)
    commit = None
    events: list[SyncEvent | MemoryWritten] = []
    if chosen != local:
        if chosen is None:
            path.unlink(missing_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(path, chosen)
        message = f"sync: resolve {record.file} (take {take})\n\n{RESOLVED}: {record.file} {take}"
        try:
            commit_files(git, [record.file], message)
        except GitFailure as failure:
            return [SyncFailed(kind="error", message=failure.message)]
        commit = git.rev("HEAD")
        events.append(_written(git, record.file, len(chosen or b""), commit))
    close_conflict(root, record)
    return [*events, SyncResolved(file=record.file, take=take, commit=commit)]


def _settled(record: ConflictRecord, current: bytes | None, take: Take) -> bytes | None:
    """The held file once `take` is chosen: the other side's lines removed (lines either side
    wrote since stay), or the file deleted when the side taken had deleted it."""
    if take == "both":
        return current
    if (take == "local" and record.local_missing) or (take == "remote" and record.remote_missing):
        return None
    dropped = {
        line.encode("utf-8", "surrogateescape")
        for line in (record.remote_only if take == "local" else record.local_only)
    }
    if current is None:
        return None
    return b"".join(
        line for line in current.splitlines(keepends=True) if line.rstrip(b"\r\n") not in dropped
    )


def _same_lines(first: bytes, second: bytes) -> bool:
    return sorted(first.splitlines()) == sorted(second.splitlines())


def _written(git: Git, file: str, size: int, commit: str | None) -> MemoryWritten:
    """The resolution's commit as a memory write: the panes and the git log show it."""
    numstat = git.run(["diff", "--numstat", "HEAD^", "HEAD", "--", file], check=False).stdout
    added, removed, *_ = [*numstat.split("\t", 2), "", ""]
    plus, minus = (int(n) if n.isdigit() else 0 for n in (added, removed))
    return MemoryWritten(file, size, commit, "resolve", lines_added=plus, lines_removed=minus)


def _both(local: bytes | None, remote: bytes | None) -> bytes | None:
    if local is None or remote is None:
        return local if remote is None else remote
    return union_of(local, remote)

"""Which memory files exist, and which of them changed since the index last saw them.

Indexed: every memory file (`shell.memory.paths.is_memory_file`), real files only: a symlink is
an alias, indexed under its target's name (see `shell.memory.paths`). A file counts as unchanged
when its size and mtime match the record *and* the record was checked well after that mtime;
otherwise its bytes are hashed. The second condition is git's "racily clean" rule: file
timestamps are coarse (a few ms on Linux), so two same-size writes within one tick look
identical to `stat()` alone.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from shell.memory.paths import CURATED_FILE, MEMORY_DIR, in_memory_tree, is_memory_file

RACY_WINDOW_NS = 2_000_000_000
"""A record checked less than this long after the file's mtime is re-verified by hash."""


@dataclass(frozen=True, slots=True)
class FileRecord:
    """What the index knows about one memory file.

    Attributes:
        path: Workspace-relative POSIX path.
        size: Bytes at the last check.
        mtime_ns: Modification time at the last check.
        hash: sha256 hex of the bytes.
        checked_ns: Wall-clock time of the last check (for the racily-clean rule).
    """

    path: str
    size: int
    mtime_ns: int
    hash: str
    checked_ns: int = 0


@dataclass(frozen=True, slots=True)
class FileStat:
    path: str
    size: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class ChangedFile:
    record: FileRecord
    text: str


@dataclass
class SyncPlan:
    """What a sync has to do.

    Attributes:
        changed: New files and files whose content changed, with their text.
        removed: Paths of files gone since the last sync (deleted, renamed, now a symlink).
        touched: Files whose bytes are unchanged but whose size or mtime moved (persisted).
        rechecked: Files re-hashed only because their record was racily clean; nothing but the
            check time changed, so only the in-memory record is updated.
    """

    changed: list[ChangedFile] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    touched: list[FileRecord] = field(default_factory=list)
    rechecked: list[FileRecord] = field(default_factory=list)

    @property
    def content_changed(self) -> bool:
        return bool(self.changed or self.removed)


def _walk_markdown(folder: str, relative: str, found: dict[str, FileStat]) -> None:
    # os.scandir, not pathlib: this runs on every search and every watch event, and pathlib's
    # per-path parsing costs ~0.1 ms a file.
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        path = f"{relative}/{entry.name}"
        try:
            if entry.is_symlink() or not in_memory_tree(path):
                continue
            if entry.is_dir(follow_symlinks=False):
                _walk_markdown(entry.path, path, found)
            elif is_memory_file(path) and entry.is_file(follow_symlinks=False):
                info = entry.stat(follow_symlinks=False)
                found[path] = FileStat(path, info.st_size, info.st_mtime_ns)
        except OSError:  # vanished between listing and stat
            continue


def scan_memory_files(workspace: Path) -> dict[str, FileStat]:
    """Stat every indexable memory file under `workspace`, keyed by relative POSIX path."""
    found: dict[str, FileStat] = {}
    try:
        info = os.lstat(os.path.join(workspace, CURATED_FILE))
        if stat.S_ISREG(info.st_mode):
            found[CURATED_FILE] = FileStat(CURATED_FILE, info.st_size, info.st_mtime_ns)
    except OSError:
        pass
    root = os.path.join(workspace, MEMORY_DIR)
    if os.path.isdir(root) and not os.path.islink(root):
        _walk_markdown(root, MEMORY_DIR, found)
    return found


def read_memory_file(workspace: Path, path: str) -> tuple[str, str] | None:
    """The file's (text, sha256 of its bytes), or None if it vanished or cannot be read."""
    try:
        data = (workspace / path).read_bytes()
    except OSError:
        return None
    return data.decode("utf-8", errors="replace"), hashlib.sha256(data).hexdigest()


def _stat_clean(current: FileStat, record: FileRecord) -> bool:
    return (
        current.size == record.size
        and current.mtime_ns == record.mtime_ns
        and record.checked_ns - current.mtime_ns > RACY_WINDOW_NS
    )


def plan_sync(
    workspace: Path, records: dict[str, FileRecord], now_ns: int | None = None
) -> SyncPlan:
    """Compare the files on disk with `records` and say what changed.

    Args:
        workspace: The workspace root.
        records: The index's file records, keyed by path.
        now_ns: The check time to record (wall clock by default).
    """
    import time

    checked = time.time_ns() if now_ns is None else now_ns
    plan = SyncPlan()
    current = scan_memory_files(workspace)
    for path, info in current.items():
        record = records.get(path)
        if record is not None and _stat_clean(info, record):
            continue
        content = read_memory_file(workspace, path)
        if content is None:
            if record is not None:
                plan.removed.append(path)
            continue
        text, digest = content
        fresh = FileRecord(path, info.size, info.mtime_ns, digest, checked)
        if record is not None and record.hash == digest:
            same_stat = (record.size, record.mtime_ns) == (info.size, info.mtime_ns)
            (plan.rechecked if same_stat else plan.touched).append(fresh)
        else:
            plan.changed.append(ChangedFile(fresh, text))
    plan.removed.extend(sorted(path for path in records if path not in current))
    return plan


def is_dirty(workspace: Path, records: dict[str, FileRecord]) -> bool:
    """True when any memory file's content differs from `records` (new and removed files count).

    Costs one `stat()` per file, plus a hash for files whose stat changed or is too recent.
    """
    current = scan_memory_files(workspace)
    if current.keys() != records.keys():
        return True
    for path, info in current.items():
        record = records[path]
        if _stat_clean(info, record):
            continue
        if info.size != record.size:
            return True
        content = read_memory_file(workspace, path)
        if content is None or content[1] != record.hash:
            return True
    return False

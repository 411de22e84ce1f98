"""Durable file writes and cross-process locks: the one place the core talks to fsync and flock.

`write_atomically` replaces a file so that a reader, or a crash, sees the old content or the new,
never half of either. `exclusive_lock` serialises a critical section across processes. Both are
POSIX-only, like the rest of the core.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

__all__ = ["NEW_FILE_MODE", "LockBusy", "exclusive_lock", "shared_lock", "write_atomically"]

NEW_FILE_MODE = 0o644
"""Permission bits of a file `write_atomically` creates when told to keep the old file's bits."""

_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC


def write_atomically(path: Path, data: bytes | str, *, mode: int | None = None) -> None:
    """Replace `path` with `data`: a temp file beside it (`.<name>.<random>.tmp`) is written,
    flushed and fsynced, renamed over `path`, and then the folder is fsynced so the rename itself
    survives a crash. The leading dot keeps the temp file out of the memory watcher and indexer.

    The folder must exist. On any failure the temp file is removed and `path` is untouched.

    Args:
        path: The file to create or replace.
        data: Bytes as they are, or text encoded as UTF-8 (no newline translation).
        mode: None keeps the replaced file's permission bits exactly (`NEW_FILE_MODE` for a new
            file); an int creates the file with those bits less the umask, as open(2) does,
            whatever the old file had.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    keep = _current_mode(path) if mode is None else None
    descriptor, temp = _create_temp(path, 0o600 if mode is None else mode)
    try:
        try:
            if keep is not None:
                os.fchmod(descriptor, keep)
            view = memoryview(payload)
            while view:
                view = view[os.write(descriptor, view) :]
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    _fsync_folder(path.parent)


class LockBusy(Exception):
    """Another holder has the lock and the caller asked not to wait."""


@contextlib.contextmanager
def exclusive_lock(path: Path, *, wait: bool = True) -> Iterator[None]:
    """Hold an exclusive `flock` on the lock file `path`, waiting as long as it takes (or, with
    `wait=False`, raising `LockBusy` at once when another holder has it).

    The file (and its folder) is created if missing and never deleted; its content is unused.
    The lock belongs to this open of the file, so two opens in one process exclude each other
    too; callers that share an object across threads still put a thread lock around this to
    keep the waiting in-process.
    """
    operation = fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB
    with _flocked(path, operation):
        yield


@contextlib.contextmanager
def shared_lock(path: Path) -> Iterator[None]:
    """Hold a shared `flock` on `path`: any number of shared holders, never beside an
    exclusive one (appenders share; whoever rewrites the file takes it exclusively)."""
    with _flocked(path, fcntl.LOCK_SH):
        yield


@contextlib.contextmanager
def _flocked(path: Path, operation: int) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # under .cairn: the user's only
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(descriptor, operation)
        except BlockingIOError:
            raise LockBusy(str(path)) from None
        try:
            yield
        finally:
            fcntl.flock(descriptor, fcntl.LOCK_UN)
    finally:
        os.close(descriptor)


def _current_mode(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        return NEW_FILE_MODE


def _create_temp(path: Path, mode: int) -> tuple[int, Path]:
    while True:
        temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(temp, _TEMP_FLAGS, mode), temp
        except FileExistsError:
            continue


def _fsync_folder(folder: Path) -> None:
    # Best effort: by now the rename has happened, and a filesystem that cannot fsync a
    # directory (some network and FUSE mounts) must not turn a done write into an error.
    with contextlib.suppress(OSError):
        descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def remove_stale_temp_files(candidates: Iterable[Path], older_than_s: float = 60.0) -> list[Path]:
    """Remove the temp files `write_atomically` leaves behind when a kill interrupts it; a young
    one may be another process's write in progress, and stays."""
    removed = []
    cutoff = time.time() - older_than_s
    for temp in candidates:
        try:
            if temp.is_file() and temp.stat().st_mtime < cutoff:
                temp.unlink()
                removed.append(temp)
        except OSError:
            continue  # gone already, or not ours to remove
    return removed

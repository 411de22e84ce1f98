"""Replacing a memory file's bytes on disk only while it still holds what was read.

Editors take no lock, so `MemoryFiles` (`shell.memory.files.door`) reads a file, decides, and swaps
the new bytes in only if the file is unchanged: this narrows the window to the final rename, it
cannot close it. The swap itself is atomic (`shell.fsio.write_atomically`: temp file, fsync,
rename, fsync of the folder), and a missing file reads as empty.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path

from shell.fsio import write_atomically
from shell.memory.files.values import MemoryWriteError


def read_or_empty(path: Path, name: str) -> bytes:
    """The file's bytes, or b"" when it does not exist.

    Raises:
        MemoryWriteError: the file exists but cannot be read (`name` is its memory path).
    """
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""
    except OSError as error:
        raise MemoryWriteError(f"could not read {name}: {error.strerror}") from None


def replace_if_unchanged(path: Path, expected: bytes, data: bytes) -> bool:
    """Write `data` unless the file no longer holds `expected` (an editor saved meanwhile).
    Editors take no lock, so this narrows the window to the final rename; it cannot close it."""
    try:
        current = path.read_bytes()
    except FileNotFoundError:
        current = b""
    if current != expected:
        return False
    _atomic_write(path, data)
    return True


def replace_all(swaps: Sequence[tuple[Path, str, bytes, bytes]]) -> None:
    """`replace_if_unchanged` for several files (path, name, expected, data), all or none: when
    one changed meanwhile (or its write failed), the files already written get their old bytes
    back, unless something else changed them since.

    Raises:
        MemoryWriteError: a file changed on disk; nothing was written.
        OSError: a write failed; nothing was written.
    """
    done: list[tuple[Path, bytes, bytes]] = []
    try:
        for path, name, expected, data in swaps:
            if not replace_if_unchanged(path, expected, data):
                raise MemoryWriteError(
                    f"{name} changed on disk while it was being written; nothing was written"
                )
            done.append((path, expected, data))
    except BaseException:
        for path, expected, data in reversed(done):
            _put_back(path, expected, data)
        raise


def _put_back(path: Path, old: bytes, ours: bytes) -> None:
    with contextlib.suppress(OSError):  # best effort: the error that made us undo is raised
        if path.read_bytes() != ours:
            return  # changed again since: not ours to undo
        if old:
            write_atomically(path, old)
        else:
            path.unlink()  # a missing file and an empty one read the same


def _atomic_write(path: Path, data: bytes) -> None:
    """Create the file's folder if needed, then replace the file atomically, keeping its mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, data)

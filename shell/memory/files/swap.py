"""Replacing a memory file's bytes on disk only while it still holds what was read.

Editors take no lock, so `MemoryFiles` (`shell.memory.files.door`) reads a file, decides, and swaps
the new bytes in only if the file is unchanged: this narrows the window to the final rename, it
cannot close it. The swap itself is atomic (`shell.fsio.write_atomically`: temp file, fsync,
rename, fsync of the folder), and a missing file reads as empty.
"""

from __future__ import annotations

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


def _atomic_write(path: Path, data: bytes) -> None:
    """Create the file's folder if needed, then replace the file atomically, keeping its mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, data)

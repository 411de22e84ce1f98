"""Opening a checked project path without following a symlink anywhere along it.

`ProjectRoot.resolve` checks a real path, and a symlink swapped in after the check would send a
plain `open` elsewhere. So the open walks the real path down from the project folder (checked to
be the same folder by its inode), one component at a time with `O_NOFOLLOW` through directory
descriptors: what it opens is the file at the checked path, or nothing, and a component that
became a symlink fails the call (`Moved`). A write creates its temp file and renames it within
the parent folder opened this way, so it cannot land anywhere else either.

A written file never keeps an exec bit: a new one gets 0o666 less the umask, a replaced one its
old permission bits without exec, setuid, setgid or sticky, and `Written` says when that dropped
something, so a hook-style script the model rewrote runs again only after a person's `chmod`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from shell.tools.project.root import ProjectRoot

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a FIFO swapped in for the file must not hang the open.
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_EXEC_AND_SPECIAL = 0o7111
MOVED = (
    "{shown} changed while it was being opened (a symlink appeared along its path), so it "
    "was not opened; try again once it stops changing"
)
"""What a tool says of `Moved`."""
_LINK_REFUSED = (errno.ELOOP, errno.EMLINK)  # what O_NOFOLLOW says of a link (EMLINK: BSDs)


class Moved(OSError):
    """A component of the checked path changed (a symlink or a file appeared in it) between
    the check and the open."""


@dataclass(frozen=True)
class Written:
    """A file `replace_file` wrote."""

    mode: int
    """Its permission bits now."""
    dropped: int
    """The exec (and setuid, setgid, sticky) bits the file had and lost: 0 when none."""


@contextlib.contextmanager
def opened_file(root: ProjectRoot, real: Path) -> Iterator[tuple[int, os.stat_result]]:
    """The open descriptor of `real` for reading, and its stat (a folder is opened too; the
    caller looks at the stat).

    Raises:
        FileNotFoundError: it does not exist.
        Moved: a component became a symlink since the check.
        OSError: it cannot be opened.
    """
    fd = open_descriptor(root, real)
    try:
        yield fd, os.fstat(fd)
    finally:
        os.close(fd)


def open_descriptor(root: ProjectRoot, real: Path) -> int:
    """`opened_file`'s descriptor, for the caller to close."""
    if real == root.folder:
        return _open_root(root)
    with _parent(root, real, create=False) as parent:
        return _open(real.name, _READ_FLAGS, dir_fd=parent)


def read_all(fd: int, size: int) -> bytes:
    """Everything `fd` holds, `size` bytes expected."""
    chunks: list[bytes] = []
    while chunk := os.read(fd, max(size, 65536)):
        chunks.append(chunk)
    return b"".join(chunks)


def replace_file(root: ProjectRoot, real: Path, data: bytes) -> Written:
    """Write `data` to `real`: a temp file in the parent folder opened without following a
    symlink (missing folders are created), fsynced, renamed over the name, the folder fsynced.

    Raises:
        Moved: a component became a symlink since the check.
        OSError: the write failed; `real` is untouched.
    """
    with _parent(root, real, create=True) as parent:
        try:
            before = os.stat(real.name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            before = None
        temp = f".{real.name}.{secrets.token_hex(4)}.tmp"
        fd = os.open(temp, _TEMP_FLAGS, 0o666, dir_fd=parent)  # less the umask
        try:
            try:
                old = 0
                if before is not None and stat.S_ISREG(before.st_mode):
                    old = stat.S_IMODE(before.st_mode)
                    os.fchmod(fd, old & ~_EXEC_AND_SPECIAL)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
                mode = stat.S_IMODE(os.fstat(fd).st_mode)
            finally:
                os.close(fd)
            os.rename(temp, real.name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=parent)
            raise
        os.fsync(parent)
    return Written(mode, old & _EXEC_AND_SPECIAL)


def _open_root(root: ProjectRoot) -> int:
    fd = os.open(root.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    found = os.fstat(fd)
    if (found.st_dev, found.st_ino) != root.identity:
        os.close(fd)
        raise Moved(errno.ESTALE, f"the project folder {root.folder} was replaced")
    return fd


@contextlib.contextmanager
def _parent(root: ProjectRoot, real: Path, *, create: bool) -> Iterator[int]:
    """The descriptor of `real`'s parent folder, reached from the project folder."""
    fd = _open_root(root)
    try:
        for part in real.relative_to(root.folder).parts[:-1]:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, dir_fd=fd)
            inner = _open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = inner
        yield fd
    finally:
        os.close(fd)


def _open(name: str, flags: int, *, dir_fd: int) -> int:
    try:
        return os.open(name, flags, dir_fd=dir_fd)
    except OSError as error:
        if error.errno in _LINK_REFUSED or (
            error.errno == errno.ENOTDIR and _is_link(name, dir_fd)
        ):
            raise Moved(error.errno, f"{name} became a symlink") from None
        raise


def _is_link(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False

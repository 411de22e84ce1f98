"""Where a search program (rg, git grep) looks: the checked scope, as opened, not as named.

rg follows a symlink given as an argument, so a folder swapped for a link between the check
and the start would be searched wherever it points. On Linux the scope is opened first without
following a symlink (`pinned.opened_file`) and handed over by the kernel's name for the open
descriptor, `/proc/self/fd/<n>`, which the child inherits and which no later swap changes: a
folder as the program's working folder (searched as `.`), a file as its argument. Where there
is no /proc the real path is given as before, and the race is the program's. git grep
`--no-index` follows no symlink at all, named or found, and needs none of this.
"""

from __future__ import annotations

import contextlib
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from shell.tools.project.globs import Scope
from shell.tools.project.pinned import MOVED, Moved, open_descriptor, opened_file
from shell.tools.project.root import ProjectRoot
from shell.tools.toolbox import ToolError

_PROC_FDS = Path("/proc/self/fd")
_RG_CUT = " [... omitted end of long line]"


@dataclass(frozen=True)
class Target:
    """How to run a program on a scope, and how to read the paths it prints."""

    cwd: str
    arg: str
    """What to search, given the working folder `cwd`."""
    pass_fds: tuple[int, ...]
    base: str
    """The project-relative folder printed paths are relative to ("." for the project)."""
    file: str | None
    """The project-relative file when the scope is one, printed as `arg`."""

    def project_path(self, printed: str) -> str:
        """A printed path as the project names it."""
        if self.file is not None and printed in (self.arg, f"./{self.arg}"):
            return self.file
        printed = printed.removeprefix("./")
        return printed if self.base == "." else f"{self.base}/{printed}"


@contextlib.contextmanager
def search_target(root: ProjectRoot, found: Scope) -> Iterator[Target]:
    """The `Target` of `found`, its descriptor open until the block ends.

    Raises:
        ToolError: the scope changed (a symlink appeared along it) or cannot be opened.
    """
    base = found.shown if found.is_dir else root.relative(found.path.parent)
    file = None if found.is_dir else found.shown
    if not _PROC_FDS.is_dir():
        folder = found.path if found.is_dir else found.path.parent
        arg = "." if found.is_dir else found.path.name
        yield Target(str(folder), arg, (), base, file)
        return
    opened = contextlib.ExitStack()
    try:
        fd, _ = opened.enter_context(opened_file(root, found.path))
    except Moved:
        raise ToolError(MOVED.format(shown=found.shown)) from None
    except OSError as error:
        raise ToolError(f"{found.shown} cannot be searched: {error.strerror or error}") from None
    with opened:
        named = f"{_PROC_FDS}/{fd}"
        if found.is_dir:
            yield Target(named, ".", (fd,), base, None)
        else:
            yield Target(str(root.folder), named, (fd,), base, file)


class Confirmation:
    """What a search program printed, checked against the files as opened without following a
    symlink. The program walks the scope by name: a folder in it swapped for a link mid-walk
    would show outside lines, or outside names, under inside paths. Only a line the inside file
    holds at that number, or a name that is an inside file, is kept. Matches come file by file,
    each file read on only as far as its last match."""

    def __init__(self, root: ProjectRoot) -> None:
        self._root = root
        self._shown: str | None = None
        self._reader: BinaryIO | None = None
        self._at = 0

    def line(self, shown: str, number: int, text: str) -> bool:
        """Whether line `number` of `shown` starts as `text` (a program's preview of it)."""
        if shown != self._shown or number <= self._at:
            self.close()
            self._shown = shown
            with contextlib.suppress(OSError, ValueError):
                fd = open_descriptor(self._root, self._root.folder / shown)
                self._reader = open(fd, "rb")
        if self._reader is None:
            return False
        line = b""
        while self._at < number:
            line = self._reader.readline()
            if not line:
                return False
            self._at += 1
        printed = text.removesuffix(_RG_CUT).rstrip("\ufffd")
        return line.decode("utf-8", errors="replace").startswith(printed)

    def file(self, shown: str) -> bool:
        """Whether `shown` is a regular file inside the project, reached by no symlink."""
        try:
            with opened_file(self._root, self._root.folder / shown) as (_, found):
                return stat.S_ISREG(found.st_mode)
        except (OSError, ValueError):
            return False

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
        self._shown, self._reader, self._at = None, None, 0

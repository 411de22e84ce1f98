"""The project folder, and the one check every project tool makes on a path from the model.

The model's paths are untrusted: a path is taken relative to the project folder, and refused
when it leaves it, by `..`, by an absolute path elsewhere, or through a symlink whose target lies
outside (the check is made on the resolved path, so a link anywhere along the way counts). A
write is refused inside the memory workspace too: memory changes only through the memory tools,
which commit every write.

Cairn's own files are out of reach even inside the project (`cd ~; cairn` puts them there):
each `Reserved` path the composition root names (the config, the state folder) is refused to
reads and writes, and a write is refused into `.git` and into the folder `core.hooksPath` names
(`hooks`, asked at each write, since a command may change it), so no approved write can change
what runs without asking, or what runs at the next commit.

The check is on a path; the open that follows it goes through `shell.tools.project.pinned`,
which follows no symlink, so a link swapped in between cannot send it elsewhere.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from shell.tools.project.hooks import hooks_folders
from shell.tools.toolbox import ToolError


@dataclass(frozen=True)
class Reserved:
    """A file or folder of Cairn's own (or that decides what Cairn runs) that no project tool
    may write, nor read unless `readable`."""

    path: Path
    what: str
    """What it is, to finish "'<path>' is …" (e.g. "Cairn's config file")."""
    readable: bool = False
    """Read freely, only never written (git's global config, which holds no secret of ours)."""


class ProjectRoot:
    """The folder the project tools work in.

    Args:
        folder: The project folder (it must exist).
        protected: Folders inside it that project tools may read but never write (the memory
            workspace, when it lies in the project).
        reserved: Cairn's own files, never written and, unless readable, never read.
        hooks: The git hooks folders that apply to a path about to be written (by default,
            what git says of the repository holding it).
    """

    def __init__(
        self,
        folder: Path,
        *,
        protected: Sequence[Path] = (),
        reserved: Sequence[Reserved] = (),
        hooks: Callable[[Path], Iterable[Path]] = hooks_folders,
    ) -> None:
        self.folder = folder.resolve()
        self.identity = _identity(self.folder)
        """The folder's (device, inode): what `pinned` checks the folder it opens against."""
        self.protected = tuple(p.resolve() for p in protected)
        self.reserved = tuple(replace(r, path=r.path.resolve()) for r in reserved)
        self._hooks = hooks

    def resolve(self, given: str, *, for_write: bool = False) -> Path:
        """The real path of `given` inside the project.

        Raises:
            ToolError: the path is empty, holds a NUL, leaves the project (`..`, an absolute
                path elsewhere, a symlink out), is one of Cairn's own files, or is a write into
                a protected folder, `.git` or a git hooks folder.
        """
        if not given or "\0" in given:
            raise ToolError("the path is empty or holds a NUL character")
        candidate = Path(os.path.expanduser(given)) if given.startswith("~") else Path(given)
        if not candidate.is_absolute():
            candidate = self.folder / candidate
        try:
            real = candidate.resolve()  # follows every symlink along the way
        except (OSError, RuntimeError, ValueError) as error:  # a symlink loop, a lone surrogate
            raise ToolError(f"{given!r} cannot be resolved: {error}") from None
        if not real.is_relative_to(self.folder):
            raise ToolError(
                f"{given!r} is outside the project folder {self.folder}; project tools work "
                "only inside it (use a path relative to it)"
            )
        reserved = self.reserved_at(real)
        if reserved is not None and (for_write or not reserved.readable):
            verb = "change" if for_write else "read"
            raise ToolError(
                f"{given!r} is {reserved.what}; the model may not {verb} it (project tools "
                "never reach Cairn's own files, nor change what Cairn runs)"
            )
        if for_write:
            self._check_write(given, real)
        return real

    def reserved_at(self, real: Path) -> Reserved | None:
        """The reserved file or folder that holds `real` (a resolved path), if any."""
        for reserved in self.reserved:
            if real.is_relative_to(reserved.path) or self._same_inode_above(real, reserved.path):
                return reserved
        return None

    def hidden(self, shown: str) -> bool:
        """Whether a project-relative path a listing or search found is one of Cairn's own
        (a path comparison: a search finds thousands, and follows no symlink to them)."""
        path = self.folder / shown
        return any(path.is_relative_to(r.path) for r in self.reserved if not r.readable)

    def relative(self, path: Path) -> str:
        """`path` as the model should name it: relative to the project, with `/`."""
        return path.relative_to(self.folder).as_posix() or "."

    def _check_write(self, given: str, real: Path) -> None:
        if any(real.is_relative_to(folder) for folder in self.protected):
            raise ToolError(
                f"{given!r} is in the memory workspace: change memory with memory_append or "
                "memory_write, which commit every write"
            )
        if any(part.casefold() == ".git" for part in real.relative_to(self.folder).parts):
            raise ToolError(f"{given!r} is inside .git; git's own files are not edited")
        for folder in self._hooks(real):
            if real.is_relative_to(folder) or self._same_inode_above(real, folder):
                raise ToolError(
                    f"{given!r} is in {folder}, a git hooks folder (core.hooksPath): a hook "
                    "runs at the next commit, so the model may not change one"
                )

    def _same_inode_above(self, real: Path, reserved: Path) -> bool:
        """Whether `reserved` exists and is `real` or a folder above it in the project, by
        inode: that catches a spelling `resolve` keeps apart (another case of a name on a
        case-insensitive disk)."""
        try:
            wanted = _identity(reserved)
        except OSError:
            return False
        for path in (real, *real.parents):
            if not path.is_relative_to(self.folder):
                return False
            try:
                if _identity(path) == wanted:
                    return True
            except OSError:
                continue
        return False


def _identity(path: Path) -> tuple[int, int]:
    found = path.stat()
    return found.st_dev, found.st_ino

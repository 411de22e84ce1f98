"""The project folder, and the one check every project tool makes on a path from the model.

The model's paths are untrusted: a path is taken relative to the project folder, and refused
when it leaves it, by `..`, by an absolute path elsewhere, or through a symlink whose target lies
outside (the check is made on the resolved path, so a link anywhere along the way counts). A
write is refused inside the memory workspace too: memory changes only through the memory tools,
which commit every write.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from shell.tools.toolbox import ToolError


class ProjectRoot:
    """The folder the project tools work in.

    Args:
        folder: The project folder (it must exist).
        protected: Folders inside it that project tools may read but never write (the memory
            workspace, when it lies in the project).
    """

    def __init__(self, folder: Path, *, protected: Sequence[Path] = ()) -> None:
        self.folder = folder.resolve()
        self.protected = tuple(p.resolve() for p in protected)

    def resolve(self, given: str, *, for_write: bool = False) -> Path:
        """The real path of `given` inside the project.

        Raises:
            ToolError: the path is empty, holds a NUL, leaves the project (`..`, an absolute
                path elsewhere, a symlink out), or is a write into a protected folder or `.git`.
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
        if for_write:
            if any(real.is_relative_to(folder) for folder in self.protected):
                raise ToolError(
                    f"{given!r} is in the memory workspace: change memory with memory_append or "
                    "memory_write, which commit every write"
                )
            if ".git" in real.relative_to(self.folder).parts:
                raise ToolError(f"{given!r} is inside .git; git's own files are not edited")
        return real

    def relative(self, path: Path) -> str:
        """`path` as the model should name it: relative to the project, with `/`."""
        return path.relative_to(self.folder).as_posix() or "."

"""What list_files and grep search: a folder of the project, narrowed by a glob.

A glob is matched as a .gitignore line would be, against the path relative to the searched
folder: `*.py` at any depth, `src/*` the files right in src, `src/**/*.py` those below it, `/x.py`
only there.
The same `pathspec` matcher filters both backends' paths, so rg and its fallbacks agree (rg's
own `--glob` would override .gitignore for the files it names).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pathspec

from shell.tools.project.root import ProjectRoot
from shell.tools.toolbox import ToolError


@dataclass(frozen=True)
class Scope:
    """A search's folder (or file) and its glob."""

    path: Path
    """The real path searched."""
    shown: str
    """It, relative to the project ("." for the project folder)."""
    is_dir: bool
    matches: Callable[[str], bool]
    """Whether a project-relative file path is inside the scope and matches its glob, and is
    none of Cairn's own files (`ProjectRoot.hidden`): their lines never reach the model."""


def scope(root: ProjectRoot, given: str | None, glob: str | None) -> Scope:
    """The scope of a search under `given` (default: the whole project).

    Raises:
        ToolError: the path leaves the project or does not exist, or the glob is unusable.
    """
    if glob:
        plain_text(glob, "the glob")
    path = root.resolve(given) if given else root.folder
    shown = root.relative(path)
    if not path.exists():
        raise ToolError(f"{shown} does not exist; list the project with list_files")
    is_dir = path.is_dir()
    base = shown if is_dir else root.relative(path.parent)
    prefix = "" if base == "." else base + "/"
    spec = _spec(glob) if glob else None

    def matches(file: str) -> bool:
        if not file.startswith(prefix) or root.hidden(file):
            return False
        return spec is None or spec.match_file(file[len(prefix) :])

    return Scope(path, shown, is_dir, matches)


def plain_text(value: str, what: str) -> str:
    """`value`, when a program may take it as an argument.

    Raises:
        ToolError: it holds a NUL or a lone surrogate (no valid UTF-8 for it).
    """
    if "\0" in value:
        raise ToolError(f"{what} holds a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolError(f"{what} holds characters that are not valid Unicode") from None
    return value


def _spec(glob: str) -> pathspec.PathSpec[Any]:
    try:
        return pathspec.PathSpec.from_lines("gitignore", [glob])
    except (ValueError, TypeError) as error:
        raise ToolError(f"the glob {glob!r} is not usable: {error}") from None

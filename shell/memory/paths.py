"""Which paths are memory, and where they really lead: the one rule of the tools, the index's
scan and the file watcher.

A memory file is `MEMORY.md` or a `.md` file (in any case) under `memory/` with no hidden part
(`is_memory_file`), given relative to the workspace. Absolute paths, `~`, drive letters,
backslashes, NUL bytes and `..` are refused outright. Directories and other non-regular files
are refused. Every refusal is a `MemoryPathError` whose message names the rule, so the model can
correct itself.

Symlinks, decided once: a symlink is an alias. The tools follow one that stays in the workspace
and lands on a memory file, and name the real file in what they report; the scan and the watcher
see only real files (they skip symlinks), so a note reached through an alias is indexed once,
under its real name. A symlink that leaves the workspace or the memory tree is refused by the
tools and never indexed.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path, PurePosixPath

from shell.tools.toolbox import ToolError

_DATED_NOTE = re.compile(
    r"^memory/(?:[^/]+/)*(?P<date>\d{4}-\d{2}-\d{2})(?:-[^/]+)?\.md$", re.IGNORECASE
)

CURATED_FILE = "MEMORY.md"
DIARY_FILE = "DREAMS.md"
"""Dreaming's diary: written only by dreaming (`MemoryFiles.rewrite`), never a memory path."""
MEMORY_DIR = "memory"
_ALLOWED = "only MEMORY.md and memory/**/*.md are memory files"


class MemoryPathError(ToolError):
    """A path that is not a memory file; the message names the rule it broke."""


def locate(root: Path, rel: str) -> tuple[Path, str]:
    """Check a memory path against every confinement rule.

    Args:
        root: The workspace root, already resolved.
        rel: The path as given (by the model, the user or the code), workspace-relative.

    Returns:
        The file's real absolute path and its canonical workspace-relative POSIX name (with
        symlinks inside the workspace followed).

    Raises:
        MemoryPathError: `rel` is not a memory file; the message names the rule it broke.
    """
    if not isinstance(rel, str) or not rel.strip():
        raise MemoryPathError(f"path is empty; {_ALLOWED}")
    if "\\" in rel or any(ch < " " or ch == "\x7f" for ch in rel):
        raise MemoryPathError(
            "path contains a backslash or a control character (NUL, newline, tab…); "
            "use / between folders"
        )
    if rel.startswith(("/", "~")) or (len(rel) > 1 and rel[1] == ":"):
        raise MemoryPathError(
            f"absolute paths are not allowed ({rel}); give a workspace-relative path "
            "such as MEMORY.md or memory/2026-01-31.md"
        )
    parts = [part for part in rel.strip().split("/") if part not in ("", ".")]
    if ".." in parts:
        raise MemoryPathError(f"'..' is not allowed in memory paths ({rel}); {_ALLOWED}")
    if not parts:
        raise MemoryPathError(f"path names no file ({rel}); {_ALLOWED}")
    canonical = "/".join(parts)
    check_allowed(canonical, rel)
    real = (root / canonical).resolve()
    try:
        real_rel = real.relative_to(root).as_posix()
    except ValueError:
        raise MemoryPathError(
            f"{rel} is a symlink that leads outside the workspace; {_ALLOWED}"
        ) from None
    if real_rel != canonical:
        try:
            check_allowed(real_rel, rel)
        except MemoryPathError:
            raise MemoryPathError(
                f"{rel} is a symlink to {real_rel}, which is not a memory file; {_ALLOWED}"
            ) from None
    if real.is_dir():
        raise MemoryPathError(f"{rel} is a directory, not a file; {_ALLOWED}")
    if real.exists() and not real.is_file():
        raise MemoryPathError(f"{rel} is not a regular file; {_ALLOWED}")
    return real, real_rel


def daily_note(day: date | str) -> str:
    """The workspace-relative path of a day's note: `memory/YYYY-MM-DD.md`."""
    return f"{MEMORY_DIR}/{day.isoformat() if isinstance(day, date) else day}.md"


def note_date(path: str) -> date | None:
    """The date of a dated note (`memory/[subdirs/]YYYY-MM-DD[-slug].md`), else None."""
    match = _DATED_NOTE.match(path.replace("\\", "/"))
    if match is None:
        return None
    try:
        return date.fromisoformat(match["date"])
    except ValueError:  # 2026-13-45 looks dated but is not a date: treat as evergreen
        return None


def in_memory_tree(relative: str) -> bool:
    """Whether a workspace-relative POSIX path is `memory/` or below it, with no hidden part."""
    parts = relative.split("/")
    return parts[0] == MEMORY_DIR and not any(not part or part.startswith(".") for part in parts)


def is_memory_file(relative: str) -> bool:
    """Whether a canonical workspace-relative POSIX path names a memory file."""
    if relative == CURATED_FILE:
        return True
    return in_memory_tree(relative) and "/" in relative and relative.lower().endswith(".md")


def check_allowed(canonical: str, given: str) -> None:
    """Raise MemoryPathError, naming the rule, unless `canonical` is a memory file's name.

    `given` is the path as the caller wrote it, for the message.
    """
    if is_memory_file(canonical):
        return
    parts = PurePosixPath(canonical).parts
    if parts[0] != MEMORY_DIR or len(parts) < 2:
        raise MemoryPathError(f"{given} is not a memory file; {_ALLOWED}")
    if any(part.startswith(".") for part in parts):
        raise MemoryPathError(f"{given}: hidden files and folders are not memory; {_ALLOWED}")
    raise MemoryPathError(f"{given} is not a Markdown file (.md); {_ALLOWED}")

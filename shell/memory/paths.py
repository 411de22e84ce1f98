"""Path confinement for memory files: which paths are memory, and where they really lead.

A memory path is `MEMORY.md` or a non-hidden `memory/**/*.md`, given relative to the workspace.
Absolute paths, `~`, drive letters, backslashes, NUL bytes and `..` are refused outright; a
symlink is followed only when it stays in the workspace and lands on another memory file.
Directories and other non-regular files are refused. Every refusal is a `MemoryPathError` whose
message names the rule, so the model can correct itself.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from shell.tools import ToolError

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


def check_allowed(canonical: str, given: str) -> None:
    """Raise MemoryPathError unless the canonical name `canonical` is a memory file's.

    `given` is the path as the caller wrote it, for the message.
    """
    parts = PurePosixPath(canonical).parts
    if canonical == CURATED_FILE:
        return
    if parts[0] != MEMORY_DIR or len(parts) < 2:
        raise MemoryPathError(f"{given} is not a memory file; {_ALLOWED}")
    if any(part.startswith(".") for part in parts):
        raise MemoryPathError(f"{given}: hidden files and folders are not memory; {_ALLOWED}")
    if not canonical.endswith(".md"):
        raise MemoryPathError(f"{given} is not a Markdown file (.md); {_ALLOWED}")

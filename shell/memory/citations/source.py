"""The project files memory lines cite, read only where a project tool could read them.

A citation's path is untrusted (the model wrote it): it is taken relative to the project folder
and refused when it is absolute, leaves the folder (`..`, a symlink out), is one of Cairn's own
files, or is no regular text file under `MAX_FILE_BYTES`. The check is `ProjectRoot.resolve`'s,
and the open follows no symlink (`shell.tools.project.pinned`), so nothing outside the project
is ever opened. A refused citation is never hashed; the reason says why.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from shell.memory.citations.refs import MAX_CITED_LINES, Citation, digest, line_range
from shell.tools.project.pinned import opened_file
from shell.tools.project.root import ProjectRoot
from shell.tools.toolbox import ToolError

MAX_FILE_BYTES = 1_000_000
"""A cited file larger than this is not read (a 1 GB sparse file costs one `fstat`)."""
MOVE_SEARCH_LINES = 20_000
"""A stale citation's text is looked for elsewhere in files up to this many lines…"""
MOVE_SEARCH_SIZE = 20
"""…when it names at most this many lines (each place tried is one hash of that many)."""


@dataclass(frozen=True)
class Refused:
    """A citation that is not read: `gone` when the file is missing, else why it is refused."""

    reason: str
    gone: bool = False


@dataclass(frozen=True)
class Cited:
    """The lines a citation names, as the file holds them now."""

    lines: list[str]
    file_lines: list[str]

    @property
    def digest(self) -> str:
        return digest(self.lines)

    def moved_to(self, recorded: str) -> str:
        """The range of the same length whose lines hash as `recorded`, the nearest to the
        cited one ("" when none): where the cited text went when lines were added above it."""
        size, total = max(len(self.lines), 1), len(self.file_lines)
        if total > MOVE_SEARCH_LINES or size > MOVE_SEARCH_SIZE:
            return ""
        for first in range(total - size + 1):
            if digest(self.file_lines[first : first + size]) == recorded:
                return line_range(first + 1, first + size)
        return ""


class ProjectSource:
    """Reads cited lines of one project folder; each file once per instance.

    Args:
        root: The project folder and Cairn's reserved files; None when no project is open.
    """

    def __init__(self, root: ProjectRoot | None) -> None:
        self.root = root
        self._files: dict[str, list[str] | Refused] = {}

    @classmethod
    def of(cls, folder: Path | None) -> ProjectSource:
        """The source of `folder` with no reserved files (tests, benches)."""
        return cls(ProjectRoot(folder) if folder is not None else None)

    def lines(self, citation: Citation) -> Cited | Refused:
        """The cited lines now, or why they cannot be read."""
        if citation.start < 1 or citation.end < citation.start:
            return Refused(f"{citation.name} is no line range")
        if citation.end - citation.start + 1 > MAX_CITED_LINES:
            return Refused(f"{citation.name} names more than {MAX_CITED_LINES} lines")
        found = self._file(citation.path)
        if isinstance(found, Refused):
            return found
        if citation.end > len(found):
            return Refused(
                f"{citation.name}: {citation.path} has {len(found)} lines now", gone=True
            )
        return Cited(found[citation.start - 1 : citation.end], found)

    def _file(self, path: str) -> list[str] | Refused:
        if path not in self._files:
            self._files[path] = self._read(path)
        return self._files[path]

    def _read(self, path: str) -> list[str] | Refused:
        if self.root is None:
            return Refused("no project is open")
        if path.startswith(("/", "~", "\\")):
            return Refused(f"{path} is an absolute path; cite a path relative to the project")
        try:
            real = self.root.resolve(path)
        except ToolError as error:
            if "outside the project" in str(error):
                return Refused(f"{path} is outside the project folder")
            return Refused(f"{path} is not readable by the model ({error})")
        try:
            with opened_file(self.root, real) as (fd, info):
                if not stat.S_ISREG(info.st_mode):
                    return Refused(f"{path} is not a regular file")
                if info.st_size > MAX_FILE_BYTES:
                    return Refused(f"{path} is larger than {MAX_FILE_BYTES:,} bytes")
                data = _read_at_most(fd, MAX_FILE_BYTES + 1)
        except FileNotFoundError:
            return Refused(f"{path} is gone", gone=True)
        except OSError as error:
            return Refused(f"{path} cannot be read ({error.strerror or error})")
        if len(data) > MAX_FILE_BYTES:
            return Refused(f"{path} is larger than {MAX_FILE_BYTES:,} bytes")
        if b"\0" in data:
            return Refused(f"{path} is not a text file")
        lines = data.decode("utf-8", errors="replace").split("\n")
        return lines[:-1] if lines[-1] == "" else lines


def _read_at_most(fd: int, limit: int) -> bytes:
    """What `fd` holds, `limit` bytes at most (a file may grow after its `fstat`)."""
    chunks: list[bytes] = []
    left = limit
    while left > 0 and (chunk := os.read(fd, min(left, 65536))):
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)

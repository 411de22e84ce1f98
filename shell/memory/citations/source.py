"""The project files memory lines cite, read only where a project tool could read them.

A citation's path is untrusted (the model wrote it): it is taken relative to the project folder
and refused when it is absolute, leaves the folder (`..`, a symlink out), is one of Cairn's own
files, or is no regular text file under `MAX_FILE_BYTES`. The check is `ProjectRoot.resolve`'s,
and the open follows no symlink (`shell.tools.project.pinned`), so nothing outside the project
is ever opened. A refused citation is never hashed; the reason says why.
"""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from shell.memory.citations.refs import MAX_CITED_LINES, Citation, digest, line_range
from shell.text import shorten
from shell.tools.project.pinned import opened_file
from shell.tools.project.root import ProjectRoot
from shell.tools.toolbox import ToolError

MAX_FILE_BYTES = 1_000_000
"""A cited file larger than this is not read (a 1 GB sparse file costs one `fstat`)."""
SHOWN_PATH_CHARS = 80
"""A path in a reason is cut to this (a model may write a 5,000-character one)."""
MAX_READ_BYTES = 4_000_000
"""What one check (a search's hits, one write, one `memory_get`) reads of project files at
most; a file past it is not read ("read budget spent")."""
MOVE_SEARCH_LINES = 5_000
"""A stale citation's text is looked for elsewhere in files up to this many lines…"""
MOVE_SEARCH_SIZE = 20
"""…when it names at most this many lines (each place tried is one hash of that many)…"""
MOVE_SEARCH_HASHES = 50_000
"""…and while one check has hashed fewer places than this (about 50 ms): fifty hits of stale
citations in files of 5,000 lines would otherwise take seconds."""


@dataclass(frozen=True)
class Refused:
    """A citation that is not read: `gone` when the file is missing, else why it is refused."""

    reason: str
    gone: bool = False


@dataclass(frozen=True)
class Cited:
    """The lines a citation names, as the file holds them now, and where they are."""

    lines: list[str]
    start: int
    lines_in_file: int
    places: Callable[[int], dict[str, list[int]]]
    """By window size: the first line of every window of the file that size, by its hash."""

    @property
    def digest(self) -> str:
        return digest(self.lines)

    def moved_to(self, recorded: str) -> str:
        """The range of the same length whose lines hash as `recorded`, the nearest to the
        cited one ("" when none): where the cited text went when lines were added above it."""
        size = max(len(self.lines), 1)
        if size > MOVE_SEARCH_SIZE or self.lines_in_file > MOVE_SEARCH_LINES:
            return ""
        firsts = self.places(size).get(recorded, [])
        if not firsts:
            return ""
        first = min(firsts, key=lambda at: abs(at - self.start))
        return line_range(first, first + size - 1)


class ProjectSource:
    """Reads cited lines of one project folder; each file once per instance.

    Args:
        root: The project folder and Cairn's reserved files; None when no project is open.
    """

    def __init__(self, root: ProjectRoot | None) -> None:
        self.root = root
        self._files: dict[str, list[str] | Refused] = {}
        self._places: dict[tuple[str, int], dict[str, list[int]]] = {}
        self._budget = MAX_READ_BYTES
        self._hashes_left = MOVE_SEARCH_HASHES

    @classmethod
    def of(cls, folder: Path | None) -> ProjectSource:
        """The source of `folder` with no reserved files (tests, benches)."""
        return cls(ProjectRoot(folder) if folder is not None else None)

    def lines(self, citation: Citation) -> Cited | Refused:
        """The cited lines now, or why they cannot be read."""
        name = shorten(citation.name, SHOWN_PATH_CHARS)
        if citation.start < 1 or citation.end < citation.start:
            return Refused(f"{name} is no line range")
        if citation.end - citation.start + 1 > MAX_CITED_LINES:
            return Refused(f"{name} names more than {MAX_CITED_LINES} lines")
        found = self._file(citation.path)
        if isinstance(found, Refused):
            return found
        if citation.end > len(found):
            shown = shorten(citation.path, SHOWN_PATH_CHARS)
            return Refused(f"{name}: {shown} has {len(found)} lines now", gone=True)
        lines = found[citation.start - 1 : citation.end]
        places = functools.partial(self._windows, citation.path)
        return Cited(lines, citation.start, len(found), places)

    def _windows(self, path: str, size: int) -> dict[str, list[int]]:
        """Every window of `size` lines of `path` by its hash (made once per file and size)."""
        if (path, size) not in self._places:
            found = self._files.get(path)
            places: dict[str, list[int]] = {}
            places_of = len(found) - size + 1 if isinstance(found, list) else 0
            if isinstance(found, list) and 0 < places_of <= self._hashes_left:
                self._hashes_left -= places_of
                for first in range(places_of):
                    places.setdefault(digest(found[first : first + size]), []).append(first + 1)
            self._places[(path, size)] = places
        return self._places[(path, size)]

    def _file(self, path: str) -> list[str] | Refused:
        if path not in self._files:
            self._files[path] = self._read(path)
        return self._files[path]

    def _read(self, path: str) -> list[str] | Refused:
        if self.root is None:
            return Refused("no project is open")
        shown = shorten(path, SHOWN_PATH_CHARS)
        if path.startswith(("/", "~", "\\")):
            return Refused(f"{shown} is an absolute path; cite a path relative to the project")
        try:
            real = self.root.resolve(path)
        except ToolError as error:
            if "outside the project" in str(error):
                return Refused(f"{shown} is outside the project folder")
            return Refused(f"{shown} is not readable by the model ({shorten(str(error), 160)})")
        try:
            with opened_file(self.root, real) as (fd, info):
                if not stat.S_ISREG(info.st_mode):
                    return Refused(f"{shown} is not a regular file")
                if info.st_size > MAX_FILE_BYTES:
                    return Refused(f"{shown} is larger than {MAX_FILE_BYTES:,} bytes")
                if info.st_size > self._budget:
                    return Refused(
                        f"{shown} not read: this check's {MAX_READ_BYTES:,}-byte budget is spent"
                    )
                data = _read_at_most(fd, MAX_FILE_BYTES + 1)
                self._budget -= len(data)
        except FileNotFoundError:
            return Refused(f"{shown} is gone", gone=True)
        except OSError as error:
            return Refused(f"{shown} cannot be read ({error.strerror or error})")
        if len(data) > MAX_FILE_BYTES:
            return Refused(f"{shown} is larger than {MAX_FILE_BYTES:,} bytes")
        if b"\0" in data:
            return Refused(f"{shown} is not a text file")
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

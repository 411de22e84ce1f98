"""Where a memory line cites a project file, and how such a citation is written.

A citation is `path#L12`, `path#L12-L20` or `path#L12-20`, bare or inside parentheses, brackets,
quotes or backticks, the path relative to the project folder. The write door appends the hash of
the cited lines (`README.md#L12@3f9a1c2b`: 8 hex digits of a SHA-256), which travels with the
line through sync and edits. A URL (`https://…/a.py#L3`) is no citation, and neither is a
memory file's (`memory/2026-03-01.md#L4`, `MEMORY.md#L2`): those name the workspace, not the
project.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

HASH_CHARS = 8
"""Hex digits kept of the SHA-256: one chance in four billion that a change goes unseen."""
MAX_PER_LINE = 8
"""Citations of one line that are hashed or checked; the rest are reported, never read."""
MAX_CITED_LINES = 200
"""The longest range a citation may name and still be hashed."""

_CITATION = re.compile(
    r"(?:^|(?<=[\s(\[`'\"]))"
    r"(?P<path>[^\s()\[\]`'\"<>#@|,;:*?]+)"
    r"#L(?P<start>\d{1,9})(?:-L?(?P<end>\d{1,9}))?"
    r"(?:@(?P<hash>[0-9A-Za-z]{1,64}))?"
    r"(?![\w-])"
)
_HASH = re.compile(rf"[0-9a-f]{{{HASH_CHARS}}}")
_MEMORY_PATH = re.compile(r"(?:\./)?(?:MEMORY\.md|DREAMS\.md|memory/.+\.md)", re.IGNORECASE)


@dataclass(frozen=True)
class Citation:
    """One citation found on a line: where it is (`span`, the hash included) and what it says."""

    path: str
    start: int
    end: int
    recorded: str | None
    """The hash written after `@` (as written: `well_formed` says whether it is one)."""
    span: tuple[int, int]
    range_end: int
    """Where the line range ends in the line: a hash goes right after it."""

    @property
    def well_formed(self) -> bool:
        return self.recorded is not None and _HASH.fullmatch(self.recorded) is not None

    @property
    def name(self) -> str:
        """The citation without its hash, as people write it: `README.md#L12-L20`."""
        return f"{self.path}#{line_range(self.start, self.end)}"


def find(line: str) -> list[Citation]:
    """The citations of project files on `line`, in order."""
    found = []
    for match in _CITATION.finditer(line):
        path = match["path"]
        if _MEMORY_PATH.fullmatch(path) or path.endswith("/"):
            continue
        start = int(match["start"])
        end = int(match["end"]) if match["end"] else start
        range_end = match.end("end") if match["end"] else match.end("start")
        found.append(Citation(path, start, end, match["hash"], match.span(), range_end))
    return found


def line_range(start: int, end: int) -> str:
    return f"L{start}" if start == end else f"L{start}-L{end}"


def digest(lines: Sequence[str]) -> str:
    """The hash of cited lines: their text without trailing whitespace, one per line."""
    text = "\n".join(line.rstrip() for line in lines)
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()[:HASH_CHARS]


def with_hash(line: str, citation: Citation, value: str) -> str:
    """`line` with `citation` carrying `value` as its hash (a hash it had is replaced)."""
    head, tail = line[: citation.range_end], line[citation.span[1] :]
    return f"{head}@{value}{tail}"

"""The one read window: a bounded run of a text's lines, with the line to continue from.

memory_get, read_file and read_output read the same way: at most `lines` lines from line
`from`, stopping before a character cap is passed (a lone line longer than the cap is cut
short), and `nextFrom` when more remains. Their schemas share the `from` and `lines` arguments
(`window_arguments`) and their results the same fields (`window_payload`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from shell.text import split_lines

MAX_WINDOW_LINES = 2000


@dataclass(frozen=True)
class Window:
    """Lines `from_line`… of a text."""

    text: str
    from_line: int
    lines: int
    total_lines: int
    next_from: int | None
    cut_short: bool = False
    """The character cap stopped the window before the lines asked for."""
    cut_line: bool = False
    """The one line shown was longer than the cap and is cut short."""


class Lines(Protocol):
    """What a window's result says: a `Window`, or a memory read (`ReadResult`)."""

    @property
    def text(self) -> str: ...
    @property
    def from_line(self) -> int: ...
    @property
    def lines(self) -> int: ...
    @property
    def total_lines(self) -> int: ...
    @property
    def next_from(self) -> int | None: ...


def window(text: str, from_line: int, count: int, max_chars: int) -> Window:
    """Up to `count` lines of `text` from 1-based `from_line`, stopping before `max_chars` is
    passed (newlines counted; a lone line longer than that is cut short)."""
    every = split_lines(text)
    start = from_line - 1
    kept: list[str] = []
    used = 0
    cut_short = cut_line = False
    for line in every[start : start + count]:
        cost = len(line) + (1 if kept else 0)
        if used + cost > max_chars:
            if not kept:
                kept, cut_line = [line[:max_chars]], True
            cut_short = True
            break
        kept.append(line)
        used += cost
    end = start + len(kept)
    return Window(
        text="\n".join(kept),
        from_line=from_line,
        lines=len(kept),
        total_lines=len(every),
        next_from=end + 1 if end < len(every) else None,
        cut_short=cut_short,
        cut_line=cut_line,
    )


def window_arguments(default_lines: int, max_lines: int = MAX_WINDOW_LINES) -> dict[str, Any]:
    """The `from` and `lines` properties of a reading tool's schema."""
    return {
        "from": {
            "type": "integer",
            "minimum": 1,
            "default": 1,
            "description": "1-based line to start reading at.",
        },
        "lines": {
            "type": "integer",
            "minimum": 1,
            "maximum": max_lines,
            "default": default_lines,
            "description": "How many lines to read.",
        },
    }


def window_payload(shown: str, found: Lines, *, line_cut: bool = False) -> dict[str, Any]:
    """What the model reads of a window of `shown` (a path, an output's ref)."""
    payload: dict[str, Any] = {
        "path": shown,
        "text": found.text,
        "from": found.from_line,
        "lines": found.lines,
        "totalLines": found.total_lines,
    }
    if line_cut:
        payload["lineCut"] = True
    if found.next_from is not None:
        payload["nextFrom"] = found.next_from
        payload["note"] = f"[More content available. Use from={found.next_from} to continue.]"
    elif found.from_line > found.total_lines and found.total_lines:
        payload["note"] = f"[from is past the end: the file has {found.total_lines} lines.]"
    return payload

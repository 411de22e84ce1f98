"""Text rules the core and the TUI share: the one family of truncators (`shorten` keeps the head,
`trim_middle` the head and the tail), sentences, and normal forms.

Pure functions over strings. The package also holds which sentences state a fact
(`statements.py`), exact identifiers (`identifiers.py`), the one stop-word list
(`stop_words.py`), tiktoken counts (`tokens.py`) and text made safe to print to a terminal
(`printable.py`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = [
    "ELLIPSIS",
    "collapse",
    "counted",
    "display_line",
    "line_change",
    "normalized",
    "sentences",
    "short_sha",
    "shorten",
    "split_lines",
    "trim_middle",
]

ELLIPSIS = "…"
HEAD_SHARE, TAIL_SHARE = 0.70, 0.20
"""What `trim_middle` keeps of its limit: OpenClaw's bootstrap rule, the marker in the rest."""


def short_sha(sha: str | None) -> str:
    """A commit's short name, as every front end shows it."""
    return (sha or "")[:7]


def split_lines(text: str) -> list[str]:
    """Lines without their endings (`\\n` or `\\r\\n`); a final newline starts no line."""
    if not text:
        return []
    lines = text.replace("\r\n", "\n").split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def shorten(text: str, limit: int, marker: str = ELLIPSIS) -> str:
    """`text` unchanged when it has at most `limit` characters, else its head and `marker`,
    `limit` characters in all: with "…", the first `limit - 1` characters ("…" alone when
    `limit` is 0; a longer marker alone may exceed a tiny limit).

    Cuts mid-word and keeps newlines and trailing spaces; callers that want one line collapse
    whitespace first.
    """
    if len(text) <= limit:
        return text
    return text[: max(0, limit - len(marker))] + marker


def _chars_trimmed(head: int, tail: int, total: int) -> str:
    return f"\n...[{total - head - tail:,} chars trimmed]...\n"


def trim_middle(
    text: str,
    limit: int,
    marker: Callable[[int, int, int], str] = _chars_trimmed,
    *,
    at_lines: bool = False,
) -> str:
    """`text` unchanged when it has at most `limit` characters, else its head and its tail
    joined by `marker(head, tail, len(text))`, `limit` characters at most: 70% of the limit
    for the head and 20% for the tail, both shrunk (7 to 2) when the marker needs more room.
    `at_lines` ends the head and starts the tail at line ends, where the text has any."""
    if len(text) <= limit:
        return text
    head, tail = int(limit * HEAD_SHARE), int(limit * TAIL_SHARE)
    if head + tail + len(marker(head, tail, len(text))) > limit:
        room = max(0, limit - len(marker(head, tail, len(text))))
        head, tail = room * 7 // 9, room * 2 // 9
    if at_lines:
        head = text.rfind("\n", 0, head) + 1 or head
        tail = len(text) - (text.find("\n", len(text) - tail) + 1 or len(text) - tail)
    joined = text[:head] + marker(head, tail, len(text)) + text[len(text) - tail :]
    return shorten(joined, limit)


_ABBREVIATIONS = ("Mr", "Mrs", "Ms", "Dr", "Prof", "St", "Jr", "Sr", "vs", "etc", "e.g", "i.e")
_SENTENCE_BREAK = re.compile(
    "".join(rf"(?<!\b{re.escape(a)}\.)" for a in _ABBREVIATIONS)
    + r"(?<!\b[A-Z]\.)(?<=[.!?])\s+|\n+"
)
"""After ., ! or ?, except after a title, a common abbreviation or an initial: "our landlord is
Mr. Okafor" is one sentence (the demo once stored it as "our landlord is Mr")."""
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")


def display_line(line: str) -> str:
    """A memory line as it reads in an answer: no bullet, no surrounding spaces."""
    return _BULLET.sub("", line).strip()


def sentences(text: str) -> list[str]:
    """Split text into sentences and lines, without list bullets or surrounding spaces."""
    found = []
    for piece in _SENTENCE_BREAK.split(text):
        piece = display_line(piece)
        if piece:
            found.append(piece)
    return found


def byte_size(count: int) -> str:
    """A byte count for people: "512 B", "3.4 KiB", "1.2 MiB"."""
    if count >= 1024 * 1024:
        return f"{count / (1024 * 1024):.1f} MiB"
    if count >= 1024:
        return f"{count / 1024:.1f} KiB"
    return f"{count} B"


def counted(count: int, noun: str) -> str:
    """`count` and the noun, plural unless the count is one: "1 line", "3 lines"."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def line_change(added: int, removed: int) -> str:
    """ "+2 lines", "−1 line", "+1 −1 lines": a removal is never "+0 lines"."""
    if not removed:
        return f"+{counted(added, 'line')}"
    if not added:
        return f"−{counted(removed, 'line')}"
    return f"+{added} −{counted(removed, 'line')}"


def collapse(text: str) -> str:
    """`text` with every run of whitespace made one space."""
    return " ".join(text.split())


def normalized(text: str) -> str:
    """Lower-case words joined by single spaces, for "is this already known" checks."""
    return " ".join(re.findall(r"\w+", text.lower()))

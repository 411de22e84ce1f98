"""Text rules the core and the TUI share: the one ellipsis rule, sentences, and normal forms.

Pure functions over strings.
"""

from __future__ import annotations

import re

__all__ = ["ELLIPSIS", "collapse", "display_line", "normalized", "sentences", "shorten"]

ELLIPSIS = "…"


def shorten(text: str, limit: int) -> str:
    """`text` unchanged when it has at most `limit` characters, else its first `limit - 1`
    characters and "…", so the result is `limit` characters long ("…" alone when `limit` is 0).

    Cuts mid-word and keeps newlines and trailing spaces; callers that want one line collapse
    whitespace first.
    """
    if len(text) <= limit:
        return text
    return text[: max(0, limit - 1)] + ELLIPSIS


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


def trim_middle(text: str, limit: int) -> str:
    """Keep the head and tail of a long text, with a marker saying how much was cut."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    return f"{text[:head]}\n...[{len(text) - limit:,} chars trimmed]...\n{text[-tail:]}"


def counted(count: int, noun: str) -> str:
    """`count` and the noun, plural unless the count is one: "1 line", "3 lines"."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def collapse(text: str) -> str:
    """`text` with every run of whitespace made one space."""
    return " ".join(text.split())


def normalized(text: str) -> str:
    """Lower-case words joined by single spaces, for "is this already known" checks."""
    return " ".join(re.findall(r"\w+", text.lower()))

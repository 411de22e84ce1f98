"""Sentence and identifier rules shared by the demo brain's turns, facts and summaries.

Pure functions over strings: no litellm, no clock.
"""

from __future__ import annotations

import re

from shell.compaction import extract_identifiers

_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")
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


def collapse(text: str) -> str:
    """`text` with every run of whitespace made one space."""
    return " ".join(text.split())


def normalized(text: str) -> str:
    """Lower-case words joined by single spaces, for "is this already known" checks."""
    return " ".join(re.findall(r"\w+", text.lower()))


_MORE_IDENTIFIERS = re.compile(
    r"""
      \bv?\d+(?:\.\d+){2,}(?:[-+][\w.]+)?\b | \bv\d+\.\d+\b      # versions: 1.106.2, v2.4
    | [\w.+-]+@[\w-]+(?:\.[\w-]+)+                             # e-mail addresses
    | (?<![\w/.~:-])[\w.-]+(?:/[\w.-]+){2,}/?                   # relative paths: src/shell/x
    | \b(?=[0-9a-f]*\d)[0-9a-f]{7,64}\b                           # hashes and long numbers
    | \b(?:[01]?\d|2[0-3]):[0-5]\d\s?[ap]m\b                      # times: 2:30pm
    """,
    re.VERBOSE | re.IGNORECASE,
)


def identifiers(text: str) -> list[str]:
    """Opaque tokens a summary must keep verbatim, in order of first appearance.

    Everything compaction's quality check counts as an identifier (ticket ids, error codes,
    hashes, paths, URLs, host:port, times, dates), so a demo summary never fails that check,
    plus versions, e-mail addresses, deeper relative paths and long numbers."""
    more = [m.group(0).rstrip(".,;:!?") for m in _MORE_IDENTIFIERS.finditer(text)]
    found = dict.fromkeys([*extract_identifiers(text, limit=10**6), *more])
    # A date inside "2026-03-03 16:05" or a hash inside a path is kept by keeping the whole.
    kept = [i for i in found if not any(i != other and i in other for other in found)]
    return sorted(kept, key=text.find)

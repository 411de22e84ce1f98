"""Tombstones: the hashes of the lines forgotten, committed in `.cairn-forgotten` so they sync.

A line is known by the sha256 of its normal form (`normal_form`): stripped, a leading list
marker (`-`, `*`, `+`, `1.`) and checkbox dropped, inner whitespace collapsed, case-folded
(after NFC), quotes, brackets and sentence punctuation (`.`, `!`, `?`, `;`, `,`, `:`) at its
ends dropped. So "- Kari lives in Oslo." and "kari  lives in oslo" are one line; "Kari lived
in Oslo" is another. The file holds hashes only, never the text; it is read from the other
machines, so it is parsed strictly: any line that is not a comment, blank or
`sha256:<64 hex> words:<n>` makes the whole file refused (`TombstoneError`), and so do the hash
of an empty line (it would drop every blank line of every file) and a count below MIN_WORDS
(one word's tombstone would take every line that says it).

A tombstone also says how many words the line has (`sha256:<hex> words:<n>`), so that a line
which holds the forgotten one among other words ("remember: Kari lives in Oslo", a commit
message quoting it) is found by hashing its runs of n words: a machine that has only the
hashes finds the same lines as the one that knew the text. The count is all it tells of the
text; a short line is still guessable from its hash (a dictionary attack), which is why the
file is not a secret store.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

FILE = ".cairn-forgotten"
"""Workspace-relative: committed, synced, merged as a union of lines."""
HEADER = (
    "# Lines forgotten with `cairn forget`: the sha256 of each line's normal form, never its\n"
    "# text. Cairn drops a line with one of these hashes from every file and commit, and no\n"
    "# write puts it back. One `sha256:<hex> words:<n>` a line; edit with care.\n"
)
MAX_TOMBSTONES = 10_000
MAX_WORDS = 200
_LIST_MARKER = re.compile(r"^(?:[-*+]|\d+[.)])(?:\s+|$)(?:\[[ xX]\](?:\s+|$))?")
_TRAILING = ".!?;,:"
_ENTRY = re.compile(r"^sha256:([0-9a-f]{64}) words:([0-9]{1,3})$")
MIN_WORDS = 2
"""A single word is not a line: its tombstone would take every line that says the word."""
_QUOTES = "\"'`‘’“”«»()[]"


class TombstoneError(ValueError):
    """A tombstone file that cannot be trusted, or a line that cannot be forgotten."""


def normal_form(line: str) -> str:
    """The line as tombstones compare it (see the module's docstring)."""
    text = unicodedata.normalize("NFC", line).strip()
    text = _LIST_MARKER.sub("", text)
    text = " ".join(text.split()).casefold()
    return text.strip(_QUOTES + _TRAILING + " ")


def line_hash(line: str) -> str:
    """The hex sha256 of `line`'s normal form."""
    return hashlib.sha256(normal_form(line).encode("utf-8")).hexdigest()


EMPTY = line_hash("")
"""The hash of a blank line: never a tombstone."""


@dataclass(frozen=True)
class Tombstones:
    """Forgotten lines: each hash with its line's word count."""

    words: Mapping[str, int] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.words)

    def __or__(self, other: Tombstones) -> Tombstones:
        return Tombstones({**self.words, **other.words})

    def __le__(self, other: Tombstones) -> bool:
        return set(self.words) <= set(other.words)

    def holds(self, line: str) -> bool:
        """Whether `line` is, or holds among its words, a forgotten line."""
        return bool(self.spans(line, first=True))

    def spans(self, line: str, *, first: bool = False) -> list[str]:
        """The forgotten lines `line` holds, in their normal form (at most one if `first`)."""
        if not self.words or not line.strip():
            return []
        tokens = normal_form(line).split()
        found: list[str] = []
        for size in sorted(set(self.words.values()), reverse=True):
            for start in range(0, len(tokens) - size + 1):
                span = " ".join(tokens[start : start + size]).strip(_QUOTES + _TRAILING + " ")
                if hashlib.sha256(span.encode("utf-8")).hexdigest() in self.words:
                    found.append(span)
                    if first:
                        return found
        return found


def forgettable(line: str) -> Tombstones:
    """The tombstone of `line`. Raises TombstoneError for a line with nothing in it."""
    normal = normal_form(line)
    if not any(char.isalnum() for char in normal):
        raise TombstoneError("a blank line (or a bare list marker) cannot be forgotten")
    if len(normal.split()) < MIN_WORDS:
        raise TombstoneError(
            "a single word cannot be forgotten (it would take every line that says it): "
            "give the whole line"
        )
    if len(normal.split()) > MAX_WORDS:
        raise TombstoneError(f"a line of more than {MAX_WORDS} words cannot be forgotten")
    return Tombstones({line_hash(line): len(normal.split())})


def parse(text: str, *, source: str = FILE) -> Tombstones:
    """The tombstones `text` holds. Raises TombstoneError for anything else in it."""
    found: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        matched = _ENTRY.match(line)
        if matched is None:
            raise TombstoneError(
                f"{source}:{number} is not a tombstone (want sha256:<64 lowercase hex>); "
                "nothing was forgotten or rewritten"
            )
        if matched.group(1) == EMPTY:
            raise TombstoneError(
                f"{source}:{number} is the hash of an empty line, which would drop every blank "
                "line; nothing was forgotten or rewritten"
            )
        words = int(matched.group(2))
        if not MIN_WORDS <= words <= MAX_WORDS:
            raise TombstoneError(
                f"{source}:{number} says {words} words (a tombstone has {MIN_WORDS} to "
                f"{MAX_WORDS}); nothing was forgotten or rewritten"
            )
        found[matched.group(1)] = words
    if len(found) > MAX_TOMBSTONES:
        raise TombstoneError(f"{source} holds more than {MAX_TOMBSTONES} tombstones")
    return Tombstones(found)


def render(tombstones: Tombstones) -> str:
    """The file's text (sorted, so two machines write the same bytes)."""
    entries = sorted(tombstones.words.items())
    return HEADER + "".join(f"sha256:{digest} words:{n}\n" for digest, n in entries)


def load(root: Path) -> Tombstones:
    """The workspace's tombstones (none when it has no file). Raises TombstoneError."""
    try:
        text = (root / FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        return Tombstones()
    except (OSError, UnicodeDecodeError) as error:
        raise TombstoneError(f"{FILE} cannot be read: {error}") from None
    return parse(text)


def drop_forgotten(text: str, tombstones: Tombstones) -> tuple[str, int]:
    """`text` without its lines that hold a forgotten one, and how many went."""
    if not tombstones:
        return text, 0
    lines = text.splitlines(keepends=True)
    kept = [line for line in lines if not tombstones.holds(line)]
    return "".join(kept), len(lines) - len(kept)


def load_or_none(root: Path) -> Tombstones:
    """The workspace's tombstones, or none when its file cannot be trusted (a sync refuses
    such a file before it lands; one edited by hand here is said by `cairn forget`)."""
    try:
        return load(root)
    except TombstoneError:
        return Tombstones()

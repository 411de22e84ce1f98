"""Undoing one write to a daily note line by line: the lines it added go, and only those.

A daily note (`memory/YYYY-MM-DD.md`) is append-only, so a later write almost always touches the
lines next to an earlier one, and git's three-way revert calls that a conflict. A commit that
only added lines to a note is undone here instead: each line it added is removed once from the
note as it is now, at the occurrence nearest the place the commit put it (shifted as the lines
before it were matched; a tie goes to the later line), whatever was appended since. A line it
added that is no longer in the note (edited or removed since) refuses the whole revert: the
note is left as it is, and the reason names the line. A commit that also changed or removed a
line of a note keeps git's strict revert.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_DAILY = re.compile(r"^memory/\d{4}-\d{2}-\d{2}\.md$")
_HUNK = re.compile(r"^@@ -\d+(?:,(?P<old>\d+))? \+(?P<start>\d+)(?:,\d+)? @@")
_NO_NEWLINE = "\\ No newline at end of file"
CONTEXT = 3


def is_daily_note(path: str) -> bool:
    """Whether a workspace-relative path is a daily note, `memory/YYYY-MM-DD.md`."""
    return _DAILY.match(path) is not None


@dataclass(frozen=True)
class AddedLine:
    """One line a commit added: where it put it (0-based, in the commit's version) and its text
    (without its newline)."""

    index: int
    text: str


@dataclass(frozen=True)
class NoteUndo:
    """What undoing one commit's lines does to a note as it is now."""

    path: str
    lines: list[str]
    """The note now, one entry per line, each with its newline (the last one may lack it)."""
    removed: list[int]
    """Which of `lines` go (0-based, ascending)."""
    missing: list[str]
    """Lines the commit added that the note no longer holds: the undo is refused."""
    deleted: bool
    """Whether the file goes: the commit created it, and nothing else is left in it."""


def added_lines(diff: str) -> list[AddedLine] | None:
    """The lines a one-file `git diff -U0` added; None when it also removed or changed a line,
    or is not a text diff (a binary file, a mode change alone). A last line given its missing
    newline, as an append to such a file writes it, is no change."""
    hunks: list[tuple[int, int, list[str]]] = []
    for row in diff.split("\n"):
        if row.startswith("@@"):
            if (hunk := _HUNK.match(row)) is None:
                return None
            old = 1 if hunk["old"] is None else int(hunk["old"])  # "-a" alone: one old line
            hunks.append((int(hunk["start"]) - 1, old, []))
        elif hunks and row:
            hunks[-1][2].append(row)
        elif row.startswith("Binary files"):
            return None
    added: list[AddedLine] = []
    for start, old, rows in hunks:
        plus = [row[1:] for row in rows if row.startswith("+")]
        if old:
            mended = old == 1 and bool(plus) and rows[:2] == [f"-{plus[0]}", _NO_NEWLINE]
            if not mended:
                return None
            plus, start = plus[1:], start + 1
        added += [AddedLine(start + i, text) for i, text in enumerate(plus)]
    return added or None


def undo_lines(path: str, current: str, added: list[AddedLine], *, created: bool) -> NoteUndo:
    """Match the lines a commit added against the note as it is now (`current`), each once."""
    lines = _split(current)
    taken: set[int] = set()
    missing: list[str] = []
    drift = 0
    for line in added:
        spots = [i for i, have in enumerate(lines) if i not in taken and _bare(have) == line.text]
        if not spots:
            missing.append(line.text)
            continue
        expected = line.index + drift
        spot = min(spots, key=lambda i: (abs(i - expected), i < expected))
        taken.add(spot)
        drift = spot - line.index
    removed = sorted(taken)
    deleted = created and not missing and len(removed) == len(lines)
    return NoteUndo(path, lines, removed, missing, deleted)


def undo_diff(undo: NoteUndo) -> str:
    """The unified diff of the undo (the note now → after), hunk by hunk with 3 lines of
    context: what the preview shows (which copy of a repeated line goes) and what the revert
    applies (`git apply --index`)."""
    out = [f"diff --git a/{undo.path} b/{undo.path}\n"]
    out += ["deleted file mode 100644\n"] if undo.deleted else []
    out += [f"--- a/{undo.path}\n", "+++ /dev/null\n" if undo.deleted else f"+++ b/{undo.path}\n"]
    gone = set(undo.removed)
    for first, last in _groups(undo.removed):
        start, end = max(0, first - CONTEXT), min(len(undo.lines), last + CONTEXT + 1)
        dropped = sum(1 for i in range(start, end) if i in gone)
        before = sum(1 for i in gone if i < start)
        new_count = end - start - dropped
        new_start = start + 1 - before - (1 if new_count == 0 else 0)
        out.append(f"@@ -{start + 1},{end - start} +{new_start},{new_count} @@\n")
        for i in range(start, end):
            out.append(("-" if i in gone else " ") + _bare(undo.lines[i]) + "\n")
            if not undo.lines[i].endswith("\n"):
                out.append(_NO_NEWLINE + "\n")
    return "".join(out)


def _groups(removed: list[int]) -> list[tuple[int, int]]:
    """Runs of removed lines close enough to share a hunk's context."""
    groups: list[tuple[int, int]] = []
    for i in removed:
        if groups and i - groups[-1][1] <= 2 * CONTEXT:
            groups[-1] = (groups[-1][0], i)
        else:
            groups.append((i, i))
    return groups


def _split(text: str) -> list[str]:
    """Lines split on newlines only, as git splits them (not on the other breaks that
    `str.splitlines` knows)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    return [*lines, parts[-1]] if parts[-1] else lines


def _bare(line: str) -> str:
    return line[:-1] if line.endswith("\n") else line

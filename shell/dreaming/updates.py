"""MEMORY.md lines that a newer note changes, and candidates a later note has overtaken.

"Kari lives in Oslo." in MEMORY.md, and a later note "Kari moved from Oslo to Bergen in March.":
the note names the line's subject and shows that its value changed (`changes.change`: from → to,
an ended value, the same slot with another value, a typed value or a switch; never a cue word
alone), and it was written after the line was last changed (git blame of both, so the same day
counts). Then dreaming proposes to replace the line with the fact as it stands ("Kari lives in
Bergen."); it never changes MEMORY.md by itself. A note that a later note changes the same way
is no candidate for an add (`overtaken`): "Andrew has no pets" is not proposed once a later note
says he adopted a dog.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from shell.config import DreamSettings
from shell.dreaming.changes import change
from shell.dreaming.deep import Known, bare
from shell.dreaming.junk import junk_kind, statement
from shell.dreaming.notes import Notes, NoteUnit
from shell.memory.paths import CURATED_FILE
from shell.text import normalized

Related = Callable[[str, str], float]
"""The cosine of two short texts."""


@dataclass(frozen=True)
class Superseded:
    """A MEMORY.md line and the newer note that changes it."""

    line: NoteUnit
    note: NoteUnit
    written: datetime
    """When the line was last changed."""
    similarity: float
    evidence: str
    """What in the note shows the change ("from Oslo to Bergen")."""
    current: str
    """The fact as it stands now: the update's text by rule."""


def superseded(
    notes: Notes,
    line_times: Callable[[str], Sequence[datetime]],
    now: datetime,
    settings: DreamSettings,
    known: Known,
    related: Related,
) -> list[Superseded]:
    """Each MEMORY.md line with the newest note that changes it (at most one per line).

    `line_times(path)` gives when each line of a file was last changed (git blame). Lines and
    notes are compared by their facts alone (`deep.bare`): no bullet, heading or speaker.
    """
    recent = [
        (unit, bare(unit.chunk.text))
        for unit in notes.in_days(now.date(), settings.max_age_days)
        if junk_kind(unit.chunk.text, known.dreamed) is None
        and unit.key not in known.rejected
        and normalized(statement(unit.chunk.text)) not in known.rejected
    ]
    if not recent:
        return []
    memory_times = line_times(CURATED_FILE)
    note_times = {path: line_times(path) for path in {unit.chunk.path for unit, _ in recent}}
    newest: dict[int, Superseded] = {}
    for line in notes.units(CURATED_FILE):
        chunk = line.chunk
        if chunk.start_line != chunk.end_line or junk_kind(chunk.text) is not None:
            continue
        written = _at(memory_times, chunk.start_line, now)
        old = bare(chunk.text)
        for note, new in recent:
            noted = _at(note_times[note.chunk.path], note.chunk.start_line, now)
            if noted <= written or (found := change(old, new, related)) is None:
                continue
            current = newest.get(chunk.start_line)
            if (
                current is None
                or note.day is None
                or (current.note.day is not None and note.day >= current.note.day)
            ):
                similarity = related(old, new)
                newest[chunk.start_line] = Superseded(
                    line, note, written, similarity, found.evidence, found.current
                )
    return [newest[key] for key in sorted(newest)]


def overtaken(
    units: Sequence[NoteUnit],
    notes: Notes,
    now: datetime,
    settings: DreamSettings,
    related: Related,
) -> set[str]:
    """The keys of `units` (notes' units) whose fact a later note changes."""
    if not units:
        return set()
    later = [
        (unit, bare(unit.chunk.text)) for unit in notes.in_days(now.date(), settings.max_age_days)
    ]
    found = set()
    for unit in units:
        old = bare(unit.chunk.text)
        for other, new in later:
            if _after(other, unit) and change(old, new, related) is not None:
                found.add(unit.key)
                break
    return found


def _after(other: NoteUnit, unit: NoteUnit) -> bool:
    """Whether `other` was written after `unit`: a later note, or further down the same one."""
    if other.day is None or unit.day is None:
        return False
    if other.chunk.path == unit.chunk.path:
        return other.chunk.start_line > unit.chunk.end_line
    return other.day > unit.day


def _at(times: Sequence[datetime], line: int, default: datetime) -> datetime:
    """When line `line` (1-based) was written; `default` (now) for a line git does not know."""
    moment = times[line - 1] if 0 < line <= len(times) else default
    return moment if moment.tzinfo is not None else moment.astimezone()

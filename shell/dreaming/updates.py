"""MEMORY.md lines that a newer note contradicts or supersedes.

"Tom takes his coffee black" in MEMORY.md, and a later note "Tom switched to oat lattes": the
note is about the same thing (its vector is close, it names the same subject), it was written
after the line was last changed (git blame of both, so the same day counts), it says that
something changed ("switched", "now", "no longer", …), and it is not the same fact restated.
Then dreaming proposes to replace the line; it never changes MEMORY.md by itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from shell.config import DreamSettings
from shell.dreaming.deep import Known
from shell.dreaming.junk import junk_kind, statement
from shell.dreaming.notes import Notes, NoteUnit
from shell.dreaming.signals import concepts
from shell.memory.paths import CURATED_FILE
from shell.memory.search.ranking import jaccard, word_tokens
from shell.text import normalized

SIMILARITY = 0.45
"""The least cosine (MiniLM) between a MEMORY.md line and a note that supersedes it, both as
bare statements. Measured: pairs that supersede 0.52–0.85 ("Tom takes his coffee black" /
"Tom switched to oat lattes" 0.52, the deploy window moved 0.81); the same subject on another
topic 0.23–0.57 ("Tom started a new job at Acme" 0.37, "Priya now works remotely on Fridays"
against "Priya leads the billing team" 0.57); unrelated lines 0.06–0.10."""
RESIDUAL_SIMILARITY = 0.18
"""The least cosine between what the two say beyond the words they share: "takes his coffee
black" / "switched to oat lattes" 0.22, pairs that supersede 0.22–0.84; the same subject on
another topic 0.02–0.14 ("leads the billing team" / "now works remotely on Fridays" 0.14)."""
RESTATED_JACCARD = 0.8
_CHANGE = re.compile(
    r"\b(?:switched|switches|changed|changes|moved|moves|now|no longer|not any ?more|anymore"
    r"|instead|replaced|replaces|from now on|stopped|started|quit|became|becomes|updated"
    r"|renamed|new|left|joined|since)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Superseded:
    """A MEMORY.md line and the newer note that supersedes it."""

    line: NoteUnit
    note: NoteUnit
    written: datetime
    """When the line was last changed."""
    similarity: float
    cue: str
    """The word of the note that says something changed."""


def superseded(
    notes: Notes,
    line_times: Callable[[str], Sequence[datetime]],
    now: datetime,
    settings: DreamSettings,
    known: Known,
) -> list[Superseded]:
    """Each MEMORY.md line with the newest note that supersedes it (at most one per line).

    `line_times(path)` gives when each line of a file was last changed (git blame). Lines and
    notes are compared by their statements alone: the index's vectors carry the heading above a
    unit, which pulls every MEMORY.md line toward its section's name.
    """
    recent = [
        (unit, change.group(0))
        for unit in notes.in_days(now.date(), settings.max_age_days)
        if junk_kind(unit.chunk.text, known.dreamed) is None
        and unit.key not in known.rejected
        and normalized(statement(unit.chunk.text)) not in known.rejected
        and (change := _CHANGE.search(statement(unit.chunk.text))) is not None
    ]
    if not recent:
        return []
    memory_times = line_times(CURATED_FILE)
    note_times = {path: line_times(path) for path in {unit.chunk.path for unit, _ in recent}}
    pairs = []
    for line in notes.units(CURATED_FILE):
        chunk = line.chunk
        if chunk.start_line != chunk.end_line or junk_kind(chunk.text) is not None:
            continue
        written = _at(memory_times, chunk.start_line, now)
        old = statement(chunk.text)
        for note, cue in recent:
            new = statement(note.chunk.text)
            noted = _at(note_times[note.chunk.path], note.chunk.start_line, now)
            if noted <= written or not concepts(old) & concepts(new):
                continue
            if jaccard(word_tokens(old), word_tokens(new)) < RESTATED_JACCARD:
                pairs.append((line, note, written, cue))
    if not pairs:
        return []
    texts = []
    for line, note, _, _ in pairs:
        old, new = _bare(line.chunk.text), _bare(note.chunk.text)
        texts += [old, new, *_beyond_shared(old, new)]
    vectors = notes.embed(texts)
    newest: dict[int, Superseded] = {}
    for index, (line, note, written, cue) in enumerate(pairs):
        whole, rest = vectors[4 * index : 4 * index + 2], vectors[4 * index + 2 : 4 * index + 4]
        similarity = float(whole[0] @ whole[1])
        if similarity < SIMILARITY or float(rest[0] @ rest[1]) < RESIDUAL_SIMILARITY:
            continue
        current = newest.get(line.chunk.start_line)
        if current is None or (note.day, similarity) > (current.note.day, current.similarity):
            newest[line.chunk.start_line] = Superseded(line, note, written, similarity, cue)
    return [newest[key] for key in sorted(newest)]


def _bare(text: str) -> str:
    """A unit as a statement without its closing full stop (it moves MiniLM's cosine)."""
    return statement(text).rstrip(".!")


def _beyond_shared(old: str, new: str) -> tuple[str, str]:
    """Each text without the words both hold (the subject): what each says of it."""
    shared = word_tokens(old) & word_tokens(new)

    def rest(text: str) -> str:
        kept = [w for w in text.split() if normalized(w) not in shared]
        return " ".join(kept) or text

    return rest(old), rest(new)


def _at(times: Sequence[datetime], line: int, default: datetime) -> datetime:
    """When line `line` (1-based) was written; `default` (now) for a line git does not know."""
    moment = times[line - 1] if 0 < line <= len(times) else default
    return moment if moment.tzinfo is not None else moment.astimezone()

"""The hash of cited project lines, recorded in the line by the write door before the commit.

Why in the line (`README.md#L12@3f9a1c2b`): the files are the memory (invariant 1), so a hash
kept under `.cairn/` would be lost to every other machine that syncs the workspace; a git
trailer travels too, but finding a line's commit at recall needs a blame. In the line, the hash
survives sync, merges, edits and moves between files, and costs nine characters.

Only the lines a write adds are stamped: a line the file already held keeps the hash it was
written with (rewriting MEMORY.md must not make its stale citations look fresh), while a new
line's hash is always computed here, replacing any the writer put there (a forged hash). A
citation whose lines say none of its line's words gets none (`support`): it never matched.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from shell.memory.citations import refs
from shell.memory.citations.source import SHOWN_PATH_CHARS, ProjectSource, Refused
from shell.memory.citations.support import says_any_of
from shell.text import shorten, split_lines
from shell.tools.project.root import ProjectRoot


@dataclass(frozen=True)
class Stamped:
    """The text as written, and the citations on its new lines that got no hash, with why."""

    text: str
    unhashed: list[str] = field(default_factory=list)


class CitationStamper:
    """Stamps the citations on the lines a write adds with the hash of the cited lines.

    Args:
        root: The project folder (with Cairn's reserved files), or what gives it at each write
            (the project tools' own, once they are offered); None when no project is open, and
            then no citation is hashed (each says so).
    """

    def __init__(self, root: ProjectRoot | Callable[[], ProjectRoot | None] | None) -> None:
        self._root = root

    @property
    def root(self) -> ProjectRoot | None:
        return self._root() if callable(self._root) else self._root

    def stamp(self, before: str, after: str, *, keep_recorded: bool = False) -> Stamped:
        """`after` with every citation on a line `before` does not hold (compared stripped)
        carrying the hash of the lines it cites now; the files are read once per call.

        `keep_recorded`: a citation that carries a hash keeps it (dreaming moving a note's line
        into MEMORY.md: the fact was written against the code of then, and stays as stale as
        it was; a person's acceptance does not vouch for the code of now)."""
        held = {line.strip() for line in split_lines(before)}
        source = ProjectSource(self.root)
        unhashed: list[str] = []
        lines = split_lines(after)
        stamped = [
            _stamped(line, source, unhashed, keep_recorded)
            if "#L" in line and line.strip() not in held
            else line
            for line in lines
        ]
        if stamped == lines:
            return Stamped(after, unhashed)
        return Stamped("\n".join(stamped) + ("\n" if after.endswith("\n") else ""), unhashed)


def _stamped(line: str, source: ProjectSource, unhashed: list[str], keep_recorded: bool) -> str:
    """`line` with its first `MAX_PER_LINE` citations hashed (from the last, so the spans of
    the earlier ones stay where they are)."""
    found = refs.find(line)
    if len(found) > refs.MAX_PER_LINE:
        unhashed.append(
            f"{len(found) - refs.MAX_PER_LINE} citations past the first {refs.MAX_PER_LINE} "
            "of a line are not hashed"
        )
    for citation in reversed(found[: refs.MAX_PER_LINE]):
        if keep_recorded and citation.well_formed:
            continue
        cited = source.lines(citation)
        if isinstance(cited, Refused):
            refused = cited.reason
        elif not says_any_of(cited.lines, line):
            refused = "its lines say none of this line's words; cite the lines that say it"
        else:
            line = refs.with_hash(line, citation, cited.digest)
            continue
        unhashed.append(f"{shorten(citation.name, SHOWN_PATH_CHARS)}: {refused}")
        if citation.recorded is not None:  # a hash nobody here computed is not kept
            line = line[: citation.range_end] + line[citation.span[1] :]
    return line


def stamped(
    stamper: CitationStamper | None, before: str, after: str, *, keep_recorded: bool = False
) -> tuple[str, list[str]]:
    """`after` with the citations its new lines make hashed (none without a stamper), and
    those left unhashed."""
    if stamper is None or "#L" not in after:
        return after, []
    done = stamper.stamp(before, after, keep_recorded=keep_recorded)
    return done.text, done.unhashed

"""Recalled lines' citations of project files, checked against the files now.

Each citation on a hit's snippet is `fresh` (the cited lines hash as recorded), `stale` (they
changed; `moved_to` names where the same text is now, when it moved), `gone` (the file or the
lines are missing) or `unchecked` (no hash recorded, no project open, a refused path). A hit's
checks share one `ProjectSource`, so a file cited a hundred times is read once; at most
`MAX_PER_HIT` citations of a hit are checked and `MAX_PER_LINE` of a line.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from shell.events import CitationCheck, SearchHit
from shell.memory.citations import refs
from shell.memory.citations.source import SHOWN_PATH_CHARS, ProjectSource, Refused
from shell.text import shorten

MAX_PER_HIT = 24
"""Citations of one hit that are checked; more are summed up in one unchecked entry."""


def check(citation: refs.Citation, source: ProjectSource) -> CitationCheck:
    """What `citation` says now of the project file it names."""
    name = shorten(citation.name, SHOWN_PATH_CHARS)
    if citation.recorded is None:
        return CitationCheck(name, "unchecked", f"{name} has no hash recorded")
    if not citation.well_formed:
        return CitationCheck(name, "unchecked", f"{name} carries no valid hash")
    cited = source.lines(citation)
    if isinstance(cited, Refused):
        return CitationCheck(name, "gone" if cited.gone else "unchecked", cited.reason)
    if cited.digest == citation.recorded:
        return CitationCheck(name, "fresh", f"{name} is as it was when this was written")
    moved = cited.moved_to(citation.recorded)
    where = f"; the same lines are now at {citation.path}#{moved}" if moved else ""
    return CitationCheck(name, "stale", f"{name} changed since this was written{where}", moved)


def check_text(text: str, source: ProjectSource, limit: int = MAX_PER_HIT) -> list[CitationCheck]:
    """The checks of the citations on the lines of `text`, `limit` at most."""
    found: list[CitationCheck] = []
    skipped = 0
    for line in text.splitlines():
        if "#L" not in line:
            continue
        citations = refs.find(line)
        skipped += max(0, len(citations) - refs.MAX_PER_LINE)
        for citation in citations[: refs.MAX_PER_LINE]:
            if len(found) < limit:
                found.append(check(citation, source))
            else:
                skipped += 1
    if skipped:
        found.append(
            CitationCheck(f"{skipped} more", "unchecked", f"{skipped} more citations not checked")
        )
    return found


def checked_hits(hits: Iterable[SearchHit], source: ProjectSource) -> list[SearchHit]:
    """`hits`, each with its snippet's citations checked."""
    return [
        replace(hit, citations=checks) if (checks := check_text(hit.snippet, source)) else hit
        for hit in hits
    ]


def model_marks(checks: Iterable[CitationCheck]) -> list[str]:
    """The checks as the model reads them: `[stale: README.md#L12 changed since …]`."""
    return [f"[{c.mark}: {c.reason}]" for c in checks]

"""Updates for MEMORY.md lines whose citation of a project file went stale.

A line `- tests run with make test (README.md#L12@3f9a1c2b)` whose README line 12 no longer
hashes as recorded is proposed again with the citation re-made: its fact, then `— Source:
README.md#L12` (or the range the same text moved to, `#L14`), which the write door hashes anew
when a person accepts it. Only the hash of "then" is known, so the evidence is the cited lines
as they read now, and that they changed. Like every proposal it waits for a person (the fact
may need rewording to what the file says now; the review lets them edit it). A line whose
citation is gone is left to `cairn index --stale`: there is nothing to re-cite.
"""

from __future__ import annotations

import hashlib

from shell.dreaming.junk import statement
from shell.events import Proposal, SourceRef
from shell.memory.citations import refs
from shell.memory.citations.source import Cited, ProjectSource
from shell.memory.files.door import MemoryFiles
from shell.memory.paths import CURATED_FILE
from shell.secrets.door import redacted
from shell.text import collapse, shorten, split_lines

EVIDENCE_CHARS = 160
"""The most of the cited lines' text now that a proposal's reason quotes."""
_OPENERS = {"(": ")", "[": "]", "`": "`", "'": "'", '"': '"'}


def stale_citation_updates(
    memory: str, source: ProjectSource, *, limit: int
) -> list[tuple[Proposal, str]]:
    """For each MEMORY.md line with a stale citation (the first one of the line), the update
    that re-cites it, with the key it is remembered by once decided; `limit` at most."""
    found: list[tuple[Proposal, str]] = []
    for number, line in enumerate(split_lines(memory), start=1):
        if len(found) == limit:
            break
        if "#L" not in line:
            continue
        for citation in refs.find(line)[: refs.MAX_PER_LINE]:
            recorded = citation.recorded if citation.well_formed else None
            cited = source.lines(citation) if recorded else None
            if recorded and isinstance(cited, Cited) and cited.digest != recorded:
                found.append(_update(line, number, citation, cited, recorded))
                break
    return found


def _update(
    line: str, number: int, citation: refs.Citation, cited: Cited, recorded: str
) -> tuple[Proposal, str]:
    moved = cited.moved_to(recorded)
    start, end = (citation.start, citation.end)
    if moved:
        first, _, last = moved.removeprefix("L").partition("-L")
        start, end = int(first), int(last or first)
    fact = statement(line)  # its bullet and a `— Source:` after it aside
    inline = [c for c in refs.find(fact) if c.name == citation.name]
    fact = (without_citation(fact, inline[0]) if inline else fact) or fact
    if moved:
        where = f"{citation.path}#{refs.line_range(start, end)}"
        why = f"the lines {citation.name} cited are now at {where}"
    else:
        now = shorten(collapse(" ".join(cited.lines)) or "(blank lines)", EVIDENCE_CHARS)
        why = f"{citation.name} changed since this line was written; it now reads: “{now}”"
    key = f"cited|{line}"
    proposal = Proposal(
        id="d-" + hashlib.sha1(f"update|{key}|{start}-{end}".encode()).hexdigest()[:6],
        kind="update",
        text=redacted(fact),
        sources=[SourceRef(citation.path, start, end), SourceRef(CURATED_FILE, number, number)],
        score=1.0,
        reason=redacted(f"MEMORY.md line {number} cites a project file: {why}"),
        distilled_by="rule",
        replaces=line,
        replaces_line=number,
    )
    return proposal, key


def without_citation(line: str, citation: refs.Citation) -> str:
    """`line` without `citation` (and the brackets or quotes around it alone)."""
    head, tail = line[: citation.span[0]], line[citation.span[1] :]
    if head[-1:] in _OPENERS and tail[:1] == _OPENERS[head[-1]]:
        head, tail = head[:-1], tail[1:]
    head, tail = head.rstrip(), tail.lstrip()
    return collapse(head + ("" if tail[:1] in tuple(".,;:!?") else " ") + tail)


def stale_citations_of(files: MemoryFiles, *, limit: int) -> list[tuple[Proposal, str]]:
    """`stale_citation_updates` of MEMORY.md as the door reads it, against the project the
    door hashes citations with (none: nothing is stale)."""
    if files.citations is None or files.citations.root is None:
        return []
    return stale_citation_updates(
        files.text(CURATED_FILE), ProjectSource(files.citations.root), limit=limit
    )

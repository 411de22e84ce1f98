"""Every memory line whose citations of project files no longer hold (`cairn index --stale`),
read from the memory files themselves: no index is needed, nor opened."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from shell.events import CitationCheck, CitationMark
from shell.memory.citations import refs
from shell.memory.citations.check import check
from shell.memory.citations.source import ProjectSource
from shell.memory.index.scan import read_memory_file, scan_memory_files
from shell.text import split_lines

NOT_HOLDING: frozenset[CitationMark] = frozenset({"stale", "gone"})


@dataclass(frozen=True)
class CheckedLine:
    """One citation of one memory line, and what it says now."""

    path: str
    line: int
    text: str
    check: CitationCheck


def checked_lines(
    workspace: Path, source: ProjectSource, marks: Collection[CitationMark] = NOT_HOLDING
) -> list[CheckedLine]:
    """The citations marked one of `marks` on the lines of MEMORY.md and memory/**/*.md, in
    file and line order (MEMORY.md first)."""
    found: list[CheckedLine] = []
    names = sorted(scan_memory_files(workspace), key=lambda name: (name != "MEMORY.md", name))
    for name in names:
        read = read_memory_file(workspace, name)
        if read is None:
            continue
        for number, line in enumerate(split_lines(read[0]), start=1):
            if "#L" not in line:
                continue
            for citation in refs.find(line)[: refs.MAX_PER_LINE]:
                checked = check(citation, source)
                if checked.mark in marks:
                    found.append(CheckedLine(name, number, line, checked))
    return found

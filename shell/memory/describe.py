"""What the memory index tells people in words: light (no numpy, no LanceDB), so a front end
imports it at start."""

from __future__ import annotations

from shell.events import CappedFile


def capped_notice(capped: list[CappedFile]) -> str:
    """What the user is told of the files search sees only in part."""
    files = ", ".join(f"{c.path} (to line {c.indexed_to_line:,})" for c in capped)
    return (
        f"too large to index whole, searched only up to a line: {files}. "
        "memory_get still reads all of it; split the file to have it all searched"
    )

"""A write counts what it changed as a diff would: a changed line is one added and one removed,
a deletion removes (what the write card says of them: tests/ui/test_write_cards.py)."""

from __future__ import annotations

from shell.events import MemoryWritten
from shell.memory.files.door import MemoryFiles


def write(files: MemoryFiles, text: str) -> MemoryWritten:
    files.read("MEMORY.md")
    return files.write("MEMORY.md", text, reason="tool").event


def test_a_changed_line_is_one_added_and_one_removed(memory_files: MemoryFiles) -> None:
    write(memory_files, "# Memory\n- tea\n- tabs\n")
    changed = write(memory_files, "# Memory\n- coffee\n- tabs\n")
    deleted = write(memory_files, "# Memory\n- coffee\n")
    added = write(memory_files, "# Memory\n- coffee\n- spaces\n")

    assert (changed.lines_added, changed.lines_removed) == (1, 1)
    assert (deleted.lines_added, deleted.lines_removed) == (0, 1)
    assert (added.lines_added, added.lines_removed) == (1, 0)

"""A write card counts a changed line "+1 −1 line" and a deletion "−1 line" (the counts come
from the core: tests/core/test_write_line_counts.py), never "+1 line" and "+0 lines"."""

from __future__ import annotations

import pytest

from shell.events import MemoryWritten
from widgets.cards.blocks import memory_write_text


@pytest.mark.parametrize(
    ("added", "removed", "said"),
    [(1, 1, "+1 −1 line"), (0, 1, "−1 line"), (0, 3, "−3 lines"), (2, 0, "+2 lines")],
)
def test_a_write_card_says_what_changed(added: int, removed: int, said: str) -> None:
    event = MemoryWritten(
        "MEMORY.md", 12, "abc1234def", "tool", lines_added=added, lines_removed=removed
    )
    assert memory_write_text(event).startswith(f"✎ MEMORY.md  {said}  12 B  (tool)  → ")

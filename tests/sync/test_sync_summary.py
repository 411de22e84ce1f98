"""What a sync says it brought in counts removed lines too: a removal is never "+0 lines"."""

from __future__ import annotations

from shell.events.sync import SyncFinished
from shell.sync.describe import sync_line
from tests.sync.conftest import Machine


def test_a_pulled_removal_is_counted_and_said(pair: tuple[Machine, Machine]) -> None:
    a, b = pair
    note = "memory/2026-12-01.md"
    a.append(note, "- first fact", "- a wrong fact")
    assert isinstance(a.engine.sync()[-1], SyncFinished)
    assert isinstance(b.engine.sync()[-1], SyncFinished)
    a.write(note, "- first fact\n")  # the wrong fact removed on A
    a.engine.sync()

    [finished] = [e for e in b.engine.sync() if isinstance(e, SyncFinished)]

    assert (finished.lines_added, finished.lines_removed) == (0, 1)
    assert "1 commit in (1 file, −1 line)" in (sync_line(finished) or "")
    assert b.text(note) == "- first fact\n"


def test_a_change_says_both_counts() -> None:
    changed = SyncFinished(
        pulled_commits=2, pushed_commits=0, files=1, lines_added=1, lines_removed=1
    )
    assert "2 commits in (1 file, +1 −1 line)" in (sync_line(changed) or "")

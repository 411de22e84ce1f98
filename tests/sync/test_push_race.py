"""A push that loses the race: the other machine pushed between this one's fetch and its push.
Real git on both sides; the only thing arranged is the timing (the other machine syncs right
after this one's fetch)."""

from __future__ import annotations

from typing import Any

import pytest

from shell.events.sync import SyncFailed, SyncFinished
from shell.sync import pull
from tests.sync.conftest import DAY, Machine, git, has_markers


def other_pushes_after_fetch(
    monkeypatch: pytest.MonkeyPatch, other: Machine, *, times: int
) -> list[str | None]:
    """After each of this machine's next `times` fetches, `other` writes a line and syncs."""
    fetched: list[str | None] = []
    racing = False

    def fetch(*args: Any, **kwargs: Any) -> str | None:
        nonlocal racing
        remote_head = pull.fetch(*args, **kwargs)
        if racing:  # the other machine's own fetch
            return remote_head
        fetched.append(remote_head)
        if len(fetched) <= times:
            other.append(DAY, f"- from {other.root.name}: pushed during the race, {len(fetched)}")
            racing = True
            try:
                assert isinstance(other.engine.sync()[-1], SyncFinished)
            finally:
                racing = False
        return remote_head

    monkeypatch.setattr("shell.sync.engine.fetch", fetch)
    return fetched


def test_a_push_that_loses_the_race_merges_again_and_pushes(
    pair: tuple[Machine, Machine], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = pair
    b.append(DAY, "- from b: the push that loses the race")
    fetched = other_pushes_after_fetch(monkeypatch, a, times=1)

    finished = b.engine.sync()[-1]

    assert isinstance(finished, SyncFinished), finished
    assert len(fetched) == 2, "the rejected push is followed by a new fetch and merge"
    remote = a.root.parent / "remote.git"
    assert git(b.root, "rev-parse", "HEAD") == git(remote, "rev-parse", "main")
    monkeypatch.undo()
    assert isinstance(a.engine.sync()[-1], SyncFinished)
    for side in (a, b):
        text = side.text(DAY)
        assert not has_markers(text)
        assert text.count("- from b: the push that loses the race") == 1
        assert text.count("- from a: pushed during the race, 1") == 1
    assert a.text(DAY) == b.text(DAY)


def test_a_remote_that_keeps_moving_fails_the_sync_and_keeps_the_local_commit(
    pair: tuple[Machine, Machine], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = pair
    b.append(DAY, "- from b: never pushed")
    fetched = other_pushes_after_fetch(monkeypatch, a, times=99)

    failed = b.engine.sync()[-1]

    assert isinstance(failed, SyncFailed) and failed.kind == "error", failed
    assert "lost the race 3 times" in failed.message and len(fetched) == 3
    assert "- from b: never pushed" in b.text(DAY) and not has_markers(b.text(DAY))
    assert git(b.root, "status", "--porcelain") == ""
    monkeypatch.undo()
    assert isinstance(b.engine.sync()[-1], SyncFinished)  # the remote stood still: it goes out
    assert isinstance(a.engine.sync()[-1], SyncFinished)
    assert a.text(DAY) == b.text(DAY) and "- from b: never pushed" in a.text(DAY)

"""Sync through a real git server on loopback (`git daemon` with receive-pack)."""

from __future__ import annotations

from pathlib import Path

from shell.events.sync import SyncCloned, SyncFinished
from shell.sync import clone_workspace
from tests.conftest import Clock
from tests.sync.conftest import DAY, Machine, has_markers, make_bare
from tests.sync.daemon import GitDaemon


def test_two_machines_sync_through_git_daemon(tmp_path: Path, clock: Clock) -> None:
    served = tmp_path / "served"
    served.mkdir()
    make_bare(served / "ws.git")
    with GitDaemon(served) as daemon:
        a = Machine(tmp_path / "a", clock).seed()
        assert isinstance(a.engine.add_remote(daemon.url("ws.git"))[-1], SyncFinished)
        cloned = clone_workspace(daemon.url("ws.git"), tmp_path / "b")
        assert isinstance(cloned[0], SyncCloned) and cloned[0].commits >= 1
        b = Machine(tmp_path / "b", clock)
        a.append(DAY, "- a over the wire")
        b.append(DAY, "- b over the wire")

        results = [a.engine.sync()[-1], b.engine.sync()[-1], a.engine.sync()[-1]]

    assert all(isinstance(result, SyncFinished) for result in results), results
    for side in (a, b):
        note = side.text(DAY)
        assert "- a over the wire\n" in note and "- b over the wire\n" in note
        assert not has_markers(note)

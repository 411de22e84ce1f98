"""SIGKILL `cairn sync`, `cairn revert` and `cairn dream --apply` mid-work, once each, and find no
half state at the next start (`bench.kills_ops` runs more)."""

from __future__ import annotations

from pathlib import Path

from bench.kills_ops import run_rounds, summary


def test_killed_sync_revert_and_dream_acceptance_leave_no_half_state(tmp_path: Path) -> None:
    results = run_rounds(3, seed=5, folder=tmp_path)

    report = summary(results)
    assert [r.operation for r in results] == ["sync", "revert", "dream"]
    assert report["kills"] == 3  # each was killed inside its work, not after it ended
    assert report["problems"] == []

"""SIGKILL `cairn run` mid-work three times and check nothing was lost (`bench.kills` runs 50)."""

from __future__ import annotations

from pathlib import Path

from bench.kills import run_rounds, summary


def test_killed_runs_leave_whole_files_real_commits_and_a_session_that_resumes(
    tmp_path: Path,
) -> None:
    results = run_rounds(3, seed=11, folder=tmp_path)

    report = summary(results)
    assert report["kills"] == 3
    assert report["problems"] == []

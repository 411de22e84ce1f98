"""A short soak (`bench.soak` runs 1,000 turns): through repeated flushes and compactions,
every planted fact stays findable and memory does not climb."""

from __future__ import annotations

from pathlib import Path

from bench.soak import report, soak_run, soak_settings
from shell.workspace import init_workspace


async def test_a_long_session_keeps_every_planted_fact_findable(tmp_path: Path) -> None:
    settings = soak_settings(tmp_path / "workspace", window=3000)
    init_workspace(settings)

    result = report(await soak_run(settings, turns=60, every=10))

    assert result["compactions"] >= 3 and sum(result["flushes"].values()) >= 3
    assert result["facts_planted"] == 6 and result["facts_missed"] == []

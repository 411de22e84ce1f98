"""bench.index_build at a small size, with the hash embedder: its children really build, one is
really killed half-way, and what it reports adds up (the texts a kill cost are at most the
batch in flight; the huge MEMORY.md stops at the cap)."""

from __future__ import annotations

from pathlib import Path

from bench.index_build import bench, table
from shell.memory.index.batching import BATCH_UNITS, MAX_FILE_UNITS


def test_the_bench_builds_kills_resumes_and_caps(tmp_path: Path) -> None:
    report = bench(days=60, lines=41, embedder="hash", huge_mb=2, workdir=tmp_path)

    full, kill, huge = report["full_build"], report["kill_half_way"], report["huge_memory"]
    assert (full["files"], full["chunks"]) == (61, 60 * 42 + 1)  # a heading and 41 lines a note
    assert kill["killed_at"] >= kill["to_embed"] // 2
    assert (
        kill["killed_at"] + kill["embedded_after_restart"] - kill["embedded_twice"]
        == (kill["to_embed"])
    )
    assert 0 <= kill["embedded_twice"] < BATCH_UNITS + 42  # the batch in flight, no more
    assert huge["lines"] > MAX_FILE_UNITS and huge["chunks"] == MAX_FILE_UNITS
    assert huge["capped"] == {"MEMORY.md": MAX_FILE_UNITS}
    assert "MEMORY.md to line 20,000" in table(report)

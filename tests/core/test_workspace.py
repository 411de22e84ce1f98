from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path

import pytest

from shell.config import load_settings
from shell.events import BootstrapMissing, BootstrapTruncated
from shell.workspace import (
    SEEDS,
    init_workspace,
    load_bootstrap,
    seed_workspace,
    sweep_interrupted_writes,
)
from tests.git_read import commits, git


def test_init_seeds_commits_and_never_overwrites(tmp_path: Path) -> None:
    (tmp_path / "SOUL.md").write_text("my own soul\n")
    settings = load_settings({"workspace": tmp_path}, env={}, file=tmp_path / "none.toml")
    init_workspace(settings)
    assert (tmp_path / "SOUL.md").read_text() == "my own soul\n"
    for name in ("AGENTS.md", "MEMORY.md", "DREAMS.md", ".gitignore"):
        assert (tmp_path / name).read_text() == SEEDS[name]
    agents = (tmp_path / "AGENTS.md").read_text()
    assert "## Session Startup" in agents and "## Red Lines" in agents
    assert git(tmp_path, "symbolic-ref", "--short", "HEAD").strip() == "main"
    assert len(commits(tmp_path)) == 1
    assert ".cairn/" in (tmp_path / ".gitignore").read_text()
    # a second init changes nothing and makes no commit
    init_workspace(settings)
    assert len(commits(tmp_path)) == 1


def test_seeding_is_idempotent(tmp_path: Path) -> None:
    assert "AGENTS.md" in seed_workspace(tmp_path)
    assert seed_workspace(tmp_path) == []


def test_bootstrap_order_and_missing_marker(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("rules")
    (tmp_path / "MEMORY.md").write_text("facts")
    boot = load_bootstrap(tmp_path)
    assert (
        boot.text.index("## AGENTS.md")
        < boot.text.index("## SOUL.md")
        < boot.text.index("## MEMORY.md")
    )
    assert "[MISSING] Expected at: SOUL.md" in boot.text
    assert boot.events == (BootstrapMissing(file="SOUL.md"),)


def test_over_budget_file_keeps_head_and_tail_with_a_marker(tmp_path: Path) -> None:
    body = "H" * 5000 + "M" * 20_000 + "T" * 5000
    (tmp_path / "AGENTS.md").write_text("a")
    (tmp_path / "SOUL.md").write_text("s")
    (tmp_path / "MEMORY.md").write_text(body)
    boot = load_bootstrap(tmp_path, max_chars=10_000, total_max_chars=60_000)
    memory = boot.text.split("## MEMORY.md\n\n", 1)[1]
    assert memory.startswith("H" * 5000) and memory.endswith("T" * 2000)
    assert "truncated MEMORY.md: kept 7000+2000 chars of 30000" in memory
    [event] = boot.events
    assert isinstance(event, BootstrapTruncated)
    assert (event.file, event.original_chars, event.reason) == ("MEMORY.md", 30_000, "per_file")


def test_total_budget_starves_later_files_loudly(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("A" * 900)
    (tmp_path / "SOUL.md").write_text("S" * 900)
    (tmp_path / "MEMORY.md").write_text("M" * 900)
    boot = load_bootstrap(tmp_path, max_chars=1000, total_max_chars=1000)
    truncated = [e for e in boot.events if isinstance(e, BootstrapTruncated)]
    assert [e.file for e in truncated] == ["SOUL.md", "MEMORY.md"]
    assert all(e.reason == "total" for e in truncated)
    assert sum(boot.chars.values()) <= 1000


@pytest.mark.parametrize("limit", [200, 1000, 20_000])
def test_truncated_file_never_exceeds_its_budget(tmp_path: Path, limit: int) -> None:
    for name in ("AGENTS.md", "SOUL.md", "MEMORY.md"):
        (tmp_path / name).write_text("x" * (limit * 3))
    boot = load_bootstrap(tmp_path, max_chars=limit, total_max_chars=limit * 3)
    assert all(chars <= limit for chars in boot.chars.values())


def test_memory_folders_renamed_during_the_start_up_sweep_are_skipped(tmp_path: Path) -> None:
    """The sweep of temp files walks memory/ while a person renames its folders: `rglob`
    raised FileNotFoundError about 1 walk in 20 here; the walk skips what moved."""
    for i in range(20):
        deep = tmp_path / "memory" / f"p{i}" / "a" / "b"
        deep.mkdir(parents=True)
        (deep / "note.md").write_text("- x\n")
    stale = tmp_path / "memory" / "p0" / ".note.md.1a2b3c4d.tmp"
    stale.write_text("half")
    os.utime(stale, (time.time() - 600, time.time() - 600))
    stop = threading.Event()

    def renaming() -> None:
        while not stop.is_set():
            for i in range(1, 20):
                here, there = tmp_path / "memory" / f"p{i}", tmp_path / "memory" / f"q{i}"
                with contextlib.suppress(OSError):
                    here.rename(there)
                    there.rename(here)

    renamer = threading.Thread(target=renaming)
    renamer.start()
    try:
        swept = [name for _ in range(200) for name in sweep_interrupted_writes(tmp_path)]
    finally:
        stop.set()
        renamer.join()
    assert swept == ["memory/p0/.note.md.1a2b3c4d.tmp"]

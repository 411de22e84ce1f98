"""`cairn revert` as a user runs it, on a daily note that kept growing after the write to undo:
the preview names the one line that goes, `--yes` removes it and keeps the later ones, and a
line edited since is refused with its reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from shell.git.store import GitStore
from shell.memory.files.door import MemoryFiles
from tests.e2e.test_cli import cairn

NOTE = "memory/2026-12-02.md"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    store = GitStore(root)
    store.ensure_repo()
    (root / ".gitignore").write_text(".cairn/\n")
    (root / "MEMORY.md").write_text("# Memory\n")
    store.commit([".gitignore", "MEMORY.md"], "workspace: seed MEMORY.md, .gitignore")
    return root


def _append(root: Path, text: str) -> str:
    commit = MemoryFiles(root, GitStore(root)).append(NOTE, text, reason="tool").event.commit
    assert commit is not None
    return commit


def test_cairn_revert_takes_back_one_append_among_later_ones(
    workspace: Path, tmp_path: Path
) -> None:
    _append(workspace, "- A: the backup runs at 02:00")
    wrong = _append(workspace, "- B: the staging database is called heron")
    _append(workspace, "- C: Priya leads billing")

    asked = cairn("revert", wrong[:7], "--workspace", str(workspace), home=tmp_path)
    assert asked.returncode == 1 and "pass --yes" in asked.stdout
    assert "\n-- B: the staging database is called heron\n" in asked.stdout
    assert "\n-- A" not in asked.stdout and "\n-- C" not in asked.stdout

    done = cairn("revert", wrong[:7], "--yes", "--workspace", str(workspace), home=tmp_path)

    assert done.returncode == 0, done.stdout + done.stderr
    assert f"  {NOTE} written → " in done.stdout and f"reverted {wrong[:7]} as " in done.stdout
    text = (workspace / NOTE).read_text()
    assert text == "- A: the backup runs at 02:00\n- C: Priya leads billing\n"


def test_cairn_revert_refuses_a_line_edited_since(workspace: Path, tmp_path: Path) -> None:
    target = _append(workspace, "- the backup runs at 02:00")
    (workspace / NOTE).write_text("- the backup runs at 03:00\n")
    GitStore(workspace).commit([NOTE], "memory(user): the backup moved")

    done = cairn("revert", target, "--yes", "--workspace", str(workspace), home=tmp_path)

    assert done.returncode == 1
    assert "refused" in done.stdout and "'- the backup runs at 02:00'" in done.stdout
    assert "memory(user): the backup moved" in done.stdout
    assert (workspace / NOTE).read_text() == "- the backup runs at 03:00\n"

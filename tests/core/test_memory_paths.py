"""One rule for what is memory, shared by the tools, the index's scan and the file watcher."""

from __future__ import annotations

from pathlib import Path

import pytest

from shell.memory.index.scan import scan_memory_files
from shell.memory.index.watch import memory_path
from shell.memory.paths import MemoryPathError, locate

MEMORY = {"MEMORY.md", "memory/2026-01-31.md", "memory/Notes.MD", "memory/projects/heron.md"}
NOT_MEMORY = {
    "DREAMS.md",
    "AGENTS.md",
    "notes/2026-01-31.md",
    "memory/todo.txt",
    "memory/.dreams/state.md",
    "memory/.draft.md",
    ".cairn/sessions/x.md",
}


def is_memory_to_the_tools(root: Path, path: str) -> bool:
    try:
        locate(root, path)
    except MemoryPathError:
        return False
    return True


def test_the_tools_the_scan_and_the_watcher_agree_on_what_is_memory(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    for path in MEMORY | NOT_MEMORY:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("- a line\n")

    by_tools = {p for p in MEMORY | NOT_MEMORY if is_memory_to_the_tools(root, p)}
    by_scan = set(scan_memory_files(root))
    by_watcher = {p for p in MEMORY | NOT_MEMORY if memory_path(root, str(root / p))}

    assert by_tools == by_scan == by_watcher == MEMORY


@pytest.mark.parametrize("alias", ["memory/alias.md", "MEMORY.md"])
def test_a_symlink_is_an_alias_named_and_indexed_by_its_target(tmp_path: Path, alias: str) -> None:
    root = tmp_path.resolve()
    (root / "memory").mkdir()
    (root / "memory/real.md").write_text("- the real note\n")
    (root / alias).symlink_to(root / "memory/real.md")

    real, name = locate(root, alias)

    assert (real, name) == (root / "memory/real.md", "memory/real.md")
    assert set(scan_memory_files(root)) == {"memory/real.md"}  # once, under its own name


def test_a_symlink_out_of_the_memory_tree_is_refused_and_never_indexed(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    (root / "memory").mkdir()
    (root / "AGENTS.md").write_text("# rules\n")
    (root / "memory/rules.md").symlink_to(root / "AGENTS.md")

    with pytest.raises(MemoryPathError, match="not a memory file"):
        locate(root, "memory/rules.md")
    assert scan_memory_files(root) == {}

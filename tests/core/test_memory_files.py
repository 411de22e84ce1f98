"""MemoryFiles, the one door: confinement (refused paths, symlinks out of the workspace) and
bounded reads, against a real git repository in tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest

from shell.git.store import GitStore
from shell.memory.files.door import MemoryFiles, MemoryPathError
from shell.tools.toolbox import ToolError

# --- confinement ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("/etc/passwd", "absolute"),
        ("/tmp/x.md", "absolute"),
        ("~/MEMORY.md", "absolute"),
        ("../outside.md", "'..'"),
        ("memory/../AGENTS.md", "'..'"),
        ("memory/../../x.md", "'..'"),
        ("memory\\x.md", "backslash"),
        ("memory/x\x00.md", "NUL"),
        ("memory/x\n.md", "control character"),
        ("AGENTS.md", "not a memory file"),
        ("SOUL.md", "not a memory file"),
        ("DREAMS.md", "not a memory file"),
        ("memory.md", "not a memory file"),
        (".git/config", "not a memory file"),
        (".cairn/locks/memory.lock", "not a memory file"),
        ("notes/x.md", "not a memory file"),
        ("memory", "not a memory file"),
        ("memory/notes.txt", "not a Markdown file"),
        ("memory/2026-11-30", "not a Markdown file"),
        ("memory/.hidden.md", "hidden"),
        ("./", "names no file"),
    ],
)
def test_refused_paths_name_the_rule(memory_files: MemoryFiles, path: str, rule: str) -> None:
    with pytest.raises(MemoryPathError, match=rule) as raised:
        memory_files.resolve(path)
    assert isinstance(raised.value, ToolError)
    assert "MEMORY.md" in str(raised.value) or rule in (
        "'..'",
        "backslash",
        "NUL",
        "control character",
        "absolute",
    )


def test_allowed_paths_resolve_inside_the_workspace(
    memory_files: MemoryFiles, memory_root: Path
) -> None:
    assert memory_files.resolve("MEMORY.md") == memory_root.resolve() / "MEMORY.md"
    assert memory_files.resolve("./memory//2026-11-30.md") == (
        memory_root.resolve() / "memory" / "2026-11-30.md"
    )
    assert memory_files.normalize("memory/projects/cairn.md") == "memory/projects/cairn.md"


def test_directory_is_refused(memory_files: MemoryFiles, memory_root: Path) -> None:
    (memory_root / "memory" / "folder.md").mkdir()
    with pytest.raises(MemoryPathError, match="directory"):
        memory_files.resolve("memory/folder.md")


def test_symlinked_file_leaving_the_workspace_is_refused(
    memory_files: MemoryFiles, memory_root: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("secret\n")
    (memory_root / "memory" / "leak.md").symlink_to(secret)
    with pytest.raises(MemoryPathError, match="outside the workspace"):
        memory_files.read("memory/leak.md")
    with pytest.raises(MemoryPathError, match="outside the workspace"):
        memory_files.append("memory/leak.md", "- x", reason="tool")
    assert secret.read_text() == "secret\n"


def test_symlinked_directory_leaving_the_workspace_is_refused(
    memory_files: MemoryFiles, memory_root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (memory_root / "memory" / "ext").symlink_to(outside, target_is_directory=True)
    with pytest.raises(MemoryPathError, match="outside the workspace"):
        memory_files.write("memory/ext/new.md", "x", reason="tool")
    assert list(outside.iterdir()) == []


def test_memory_folder_itself_symlinked_away_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "ws2"
    root.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / "memory").symlink_to(elsewhere, target_is_directory=True)
    files = MemoryFiles(root, GitStore(root))
    with pytest.raises(MemoryPathError, match="outside the workspace"):
        files.append("memory/2026-11-30.md", "- x", reason="tool")


def test_symlink_inside_memory_to_agents_md_is_refused(
    memory_files: MemoryFiles, memory_root: Path
) -> None:
    (memory_root / "memory" / "rules.md").symlink_to(memory_root / "AGENTS.md")
    with pytest.raises(MemoryPathError, match=r"AGENTS\.md, which is not a memory file"):
        memory_files.read("memory/rules.md")
    with pytest.raises(MemoryPathError, match="not a memory file"):
        memory_files.write("memory/rules.md", "pwned", reason="tool")
    assert (memory_root / "AGENTS.md").read_text() == "# AGENTS.md\n"


def test_symlink_between_memory_files_writes_through_and_keeps_the_link(
    memory_files: MemoryFiles, memory_root: Path
) -> None:
    (memory_root / "memory" / "real.md").write_text("- a\n")
    link = memory_root / "memory" / "alias.md"
    link.symlink_to(memory_root / "memory" / "real.md")
    outcome = memory_files.append("memory/alias.md", "- b", reason="tool")
    assert outcome.event.path == "memory/real.md"
    assert link.is_symlink()
    assert (memory_root / "memory" / "real.md").read_text() == "- a\n- b\n"


# --- reads ---------------------------------------------------------------------------------


def test_read_missing_file_is_empty_text(memory_files: MemoryFiles) -> None:
    result = memory_files.read("memory/2001-01-01.md")
    assert (result.text, result.lines, result.total_lines, result.next_from) == ("", 0, 0, None)


def test_read_bounds_from_and_lines(memory_files: MemoryFiles, memory_root: Path) -> None:
    (memory_root / "MEMORY.md").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    result = memory_files.read("MEMORY.md", from_line=3, lines=4)
    assert result.text == "line 3\nline 4\nline 5\nline 6"
    assert (result.from_line, result.lines, result.total_lines) == (3, 4, 10)
    assert result.next_from == 7 and result.truncated is False

    tail = memory_files.read("MEMORY.md", from_line=9, lines=50)
    assert tail.text == "line 9\nline 10" and tail.next_from is None

    past_end = memory_files.read("MEMORY.md", from_line=99)
    assert past_end.text == "" and past_end.next_from is None
    with pytest.raises(ToolError):
        memory_files.read("MEMORY.md", from_line=0)


def test_read_is_capped_at_max_read_chars_with_next_from(
    memory_files: MemoryFiles, memory_root: Path
) -> None:
    line = "x" * 99  # 100 chars with its newline
    (memory_root / "MEMORY.md").write_text((line + "\n") * 500)
    result = memory_files.read("MEMORY.md", lines=2000)
    assert len(result.text) <= 12_000
    assert result.lines == 120  # 120 * 99 + 119 newlines = 11,999
    assert result.truncated is True and result.next_from == 121
    assert memory_files.read("MEMORY.md", from_line=121, lines=2000).lines == 120


def test_single_over_long_line_is_hard_cut(memory_files: MemoryFiles, memory_root: Path):
    (memory_root / "MEMORY.md").write_text("y" * 20_000 + "\nshort\n")
    result = memory_files.read("MEMORY.md")
    assert result.text == "y" * 12_000
    assert result.truncated is True and result.next_from == 2

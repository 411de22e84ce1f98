"""MemoryFiles, the one door, when it writes: append-dedupe, stale-write refusal, atomic writes
and commits, and concurrency, against a real git repository in tmp_path."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from shell.git.store import GitStore
from shell.memory.files.door import MemoryFiles
from shell.memory.files.values import MemoryWriteError
from tests.core.conftest import FIXED
from tests.git_read import blob, commit, commits, git

REPO_ROOT = Path(__file__).resolve().parents[2]


def head_count(root: Path) -> int:
    return len(commits(root))


# --- append --------------------------------------------------------------------------------


def test_append_creates_file_and_commits_with_message(
    memory_files: MemoryFiles, memory_root: Path
) -> None:
    outcome = memory_files.append(
        "memory/2026-11-30.md", "- a\n- b\n- c", reason="flush", origin="session 3f2a turn 4"
    )
    event = outcome.event
    assert (memory_root / "memory" / "2026-11-30.md").read_text() == "- a\n- b\n- c\n"
    assert (event.path, event.lines_added, event.lines_skipped, event.reason) == (
        "memory/2026-11-30.md",
        3,
        0,
        "flush",
    )
    assert event.bytes == len("- a\n- b\n- c\n") and event.commit is not None
    head = commit(memory_root)
    assert head.sha == event.commit
    assert head.message == (
        "memory(flush): append 3 lines to memory/2026-11-30.md\n\nsession 3f2a turn 4\n"
    )
    assert head.files == ["memory/2026-11-30.md"]


def test_append_skips_duplicates_and_makes_no_commit_when_nothing_is_new(
    memory_files: MemoryFiles, memory_root: Path
) -> None:
    first = memory_files.append("memory/d.md", "- tea\n- tabs", reason="tool")
    commits_after_first = head_count(memory_root)
    second = memory_files.append("memory/d.md", "  - tea  \n- tabs\n\n", reason="tool")
    assert first.event.lines_added == 2
    assert second.event.lines_added == 0 and second.event.lines_skipped == 2
    assert second.event.commit is None and second.event.bytes == 0
    assert head_count(memory_root) == commits_after_first == 1
    assert (memory_root / "memory" / "d.md").read_text() == "- tea\n- tabs\n"


def test_append_dedupes_within_the_new_text(memory_files: MemoryFiles, memory_root: Path):
    outcome = memory_files.append("memory/d.md", "- x\n- y\n- x\n\n\n- y\n- z", reason="tool")
    assert (outcome.event.lines_added, outcome.event.lines_skipped) == (3, 2)
    # a blank run between blocks survives as one blank line
    assert (memory_root / "memory" / "d.md").read_text() == "- x\n- y\n\n- z\n"


def test_append_adds_missing_final_newline_first(memory_files: MemoryFiles, memory_root: Path):
    (memory_root / "memory" / "d.md").write_text("- old")
    outcome = memory_files.append("memory/d.md", "- new", reason="user")
    assert (memory_root / "memory" / "d.md").read_text() == "- old\n- new\n"
    assert outcome.event.bytes == len("\n- new\n")


def test_append_creates_nested_memory_folders(memory_files: MemoryFiles, memory_root: Path):
    memory_files.append("memory/projects/cairn/notes.md", "- ship it", reason="tool")
    assert (memory_root / "memory/projects/cairn/notes.md").read_text() == "- ship it\n"


def test_oversized_writes_are_refused(memory_root: Path) -> None:
    files = MemoryFiles(memory_root, GitStore(memory_root), max_write_bytes=100, max_file_bytes=150)
    with pytest.raises(MemoryWriteError, match="at most 100 bytes"):
        files.append("memory/d.md", "x" * 101, reason="tool")
    with pytest.raises(MemoryWriteError, match="at most 100 bytes"):
        files.write("MEMORY.md", "é" * 51, reason="tool")  # 102 bytes in UTF-8
    files.append("memory/d.md", "a" * 90, reason="tool")
    with pytest.raises(MemoryWriteError, match="capped at 150 bytes"):
        files.append("memory/d.md", "b" * 90, reason="tool")
    assert (memory_root / "memory" / "d.md").read_text() == "a" * 90 + "\n"


# --- write ---------------------------------------------------------------------------------


def test_write_creates_without_prior_read(memory_files: MemoryFiles, memory_root: Path):
    outcome = memory_files.write("MEMORY.md", "# Memory\n- a", reason="tool", origin="s1 t2")
    assert (memory_root / "MEMORY.md").read_text() == "# Memory\n- a\n"
    assert outcome.event.bytes == len("# Memory\n- a\n")
    head = commit(memory_root)
    assert head.message == "memory(tool): create MEMORY.md\n\ns1 t2\n"


def test_write_refused_when_never_read(memory_files: MemoryFiles, memory_root: Path):
    (memory_root / "MEMORY.md").write_text("precious\n")
    with pytest.raises(MemoryWriteError, match="has not been read; memory_get it first"):
        memory_files.write("MEMORY.md", "overwrite", reason="tool")
    assert (memory_root / "MEMORY.md").read_text() == "precious\n"


def test_write_refused_when_changed_on_disk_then_allowed_after_reread(
    memory_files: MemoryFiles, memory_root: Path
) -> None:
    (memory_root / "MEMORY.md").write_text("v1\n")
    memory_files.read("MEMORY.md")
    (memory_root / "MEMORY.md").write_text("v1\nedited by the user\n")
    with pytest.raises(MemoryWriteError, match="changed on disk since you read it"):
        memory_files.write("MEMORY.md", "v2", reason="tool")
    assert (memory_root / "MEMORY.md").read_text() == "v1\nedited by the user\n"

    memory_files.read("MEMORY.md", lines=1)
    outcome = memory_files.write("MEMORY.md", "v2", reason="tool")
    assert (memory_root / "MEMORY.md").read_text() == "v2\n"
    assert commit(memory_root).summary == "memory(tool): rewrite MEMORY.md"
    assert outcome.event.commit is not None
    # our own write is the new baseline: a second rewrite needs no re-read
    memory_files.write("MEMORY.md", "v3", reason="tool")
    assert (memory_root / "MEMORY.md").read_text() == "v3\n"


def test_write_of_identical_content_makes_no_commit(memory_files: MemoryFiles, memory_root):
    memory_files.write("MEMORY.md", "same\n", reason="tool")
    before = head_count(memory_root)
    outcome = memory_files.write("MEMORY.md", "same\n", reason="tool")
    assert outcome.event.commit is None and outcome.event.commit_error is None
    assert head_count(memory_root) == before == 1


def test_unknown_reason_is_a_programming_error(memory_files: MemoryFiles) -> None:
    with pytest.raises(ValueError, match="reason"):
        memory_files.append("memory/d.md", "- x", reason="whim")


def test_exactly_one_commit_per_write_and_no_temp_files_left(
    memory_files: MemoryFiles, memory_root: Path
) -> None:
    memory_files.append("memory/d.md", "- 1", reason="tool")
    memory_files.append("memory/d.md", "- 2", reason="tool")
    memory_files.write("MEMORY.md", "# M", reason="dream")
    memory_files.read("MEMORY.md")
    memory_files.write("MEMORY.md", "# M\n- more", reason="user")
    assert head_count(memory_root) == 4
    leftovers = [p for p in memory_root.rglob("*.tmp") if ".git" not in p.parts]
    assert leftovers == []
    status = git(memory_root, "status", "--porcelain", "--", "MEMORY.md", "memory")
    assert status == ""


def test_new_file_is_world_readable_like_a_normal_file(memory_files: MemoryFiles, memory_root):
    memory_files.append("memory/d.md", "- x", reason="tool")
    assert (memory_root / "memory" / "d.md").stat().st_mode & 0o777 == 0o644


# --- concurrency ---------------------------------------------------------------------------


def test_two_threads_with_separate_doors_lose_no_append(memory_root: Path) -> None:
    store = GitStore(memory_root, clock=lambda: FIXED)
    doors = [MemoryFiles(memory_root, store), MemoryFiles(memory_root, GitStore(memory_root))]
    errors: list[BaseException] = []

    def worker(door: MemoryFiles, name: str) -> None:
        try:
            for n in range(50):
                door.append("memory/shared.md", f"- {name} {n}", reason="tool")
        except BaseException as error:  # surface failures from the thread
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(d, f"t{i}")) for i, d in enumerate(doors)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    lines = (memory_root / "memory" / "shared.md").read_text().splitlines()
    assert sorted(lines) == sorted(f"- t{i} {n}" for i in range(2) for n in range(50))
    assert head_count(memory_root) == 100


def test_another_process_appending_at_the_same_time_loses_nothing(memory_root: Path) -> None:
    script = (
        "import sys; from pathlib import Path\n"
        "from shell.memory.files.door import MemoryFiles\n"
        "from shell.git.store import GitStore\n"
        "root = Path(sys.argv[1]); files = MemoryFiles(root, GitStore(root))\n"
        "for n in range(30): files.append('memory/shared.md', f'- child {n}', reason='tool')\n"
    )
    files = MemoryFiles(memory_root, GitStore(memory_root))
    files.git.ensure_repo()
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    child = subprocess.Popen([sys.executable, "-c", script, str(memory_root)], env=env)
    for n in range(30):
        files.append("memory/shared.md", f"- parent {n}", reason="tool")
    assert child.wait(timeout=60) == 0
    lines = set((memory_root / "memory" / "shared.md").read_text().splitlines())
    expected = {f"- {who} {n}" for who in ("child", "parent") for n in range(30)}
    assert lines == expected


def test_an_append_commits_an_edit_saved_outside_cairn_on_its_own_first(
    memory_files: MemoryFiles, memory_root: Path
) -> None:
    note = memory_root / "memory" / "2026-11-30.md"
    first = memory_files.append("memory/2026-11-30.md", "- agent fact one", reason="tool")
    assert first.outside is None
    note.write_text(note.read_text() + "- typed by the user in an editor\n")  # saved, uncommitted

    outcome = memory_files.append("memory/2026-11-30.md", "- agent fact two", reason="tool")

    text = note.read_text()
    assert text == "- agent fact one\n- typed by the user in an editor\n- agent fact two\n"
    mine, theirs = commits(memory_root)[:2]
    assert theirs.message == "edit made outside Cairn: memory/2026-11-30.md\n"
    diff = git(memory_root, "diff", f"{theirs.sha}~1", theirs.sha, "--unified=0")
    assert diff.count("\n+-") == 1
    assert "+- typed by the user in an editor" in git(memory_root, "show", theirs.sha)
    added = git(memory_root, "diff", theirs.sha, mine.sha, "--unified=0")
    assert "+- agent fact two" in added and "typed by the user" not in added
    assert mine.message.startswith("memory(tool): append 1 line")
    assert outcome.outside is not None and outcome.outside.outside_edit
    assert (outcome.outside.commit, outcome.outside.lines_added) == (theirs.sha, 1)
    assert outcome.event.commit == mine.sha and not outcome.event.outside_edit
    again = memory_files.append("memory/2026-11-30.md", "- agent fact three", reason="tool")
    assert again.outside is None


def test_an_edit_made_outside_cairn_is_committed_once_it_settles(
    memory_files: MemoryFiles, memory_root: Path
) -> None:
    memory_files.append("memory/2026-11-30.md", "- agent fact one", reason="tool")
    note = memory_root / "memory" / "2026-11-30.md"
    note.write_text(note.read_text() + "- typed in another shell\n")
    (memory_root / "notes.txt").write_text("not memory\n")

    [event] = memory_files.commit_outside_edits({"memory/2026-11-30.md", "notes.txt"})

    head = commit(memory_root)
    assert head.message == "edit made outside Cairn: memory/2026-11-30.md\n"
    assert event.commit == head.sha and event.outside_edit and event.reason == "user"
    assert blob(memory_root, "HEAD", "memory/2026-11-30.md").endswith(b"- typed in another shell\n")
    assert memory_files.commit_outside_edits({"memory/2026-11-30.md"}) == []  # settled


def test_a_read_before_an_outside_edit_still_blocks_a_rewrite_after_an_append(
    memory_files: MemoryFiles, memory_root: Path
) -> None:
    (memory_root / "MEMORY.md").write_text("# Memory\n")
    memory_files.read("MEMORY.md")
    (memory_root / "MEMORY.md").write_text("# Memory\n- the user's line\n")
    memory_files.append("MEMORY.md", "- an agent line", reason="tool")

    with pytest.raises(MemoryWriteError, match="changed on disk since you read it"):
        memory_files.write("MEMORY.md", "# Memory\n- only mine\n", reason="tool")
    assert "the user's line" in (memory_root / "MEMORY.md").read_text()

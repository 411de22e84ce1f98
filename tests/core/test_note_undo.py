"""Undoing a write to a daily note line by line, on real git: the lines it added go, and only
those, whatever was appended since; a line edited since refuses the revert with its reason; a
line written twice loses only the reverted commit's copy; a curated file, a note whose lines a
commit changed, and a commit of both kinds keep git's strict revert, whole or not at all."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from shell.git.history import MemoryHistory
from shell.git.note_undo import AddedLine, added_lines, is_daily_note, undo_lines
from shell.git.store import GitStore
from shell.memory.files.door import MemoryFiles

NOTE = "memory/2026-12-02.md"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    store = GitStore(root)
    store.ensure_repo()
    (root / ".gitignore").write_text(".cairn/\n")
    (root / "MEMORY.md").write_text("# Memory\n\n- deploys on Friday\n")
    store.commit([".gitignore", "MEMORY.md"], "workspace: seed MEMORY.md, .gitignore")
    return root


def _append(root: Path, text: str, path: str = NOTE) -> str:
    outcome = MemoryFiles(root, GitStore(root)).append(path, text, reason="tool")
    assert outcome.event.commit is not None
    return outcome.event.commit


def _write(root: Path, path: str, text: str, message: str) -> str:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(text)
    sha = GitStore(root).commit([path], message).sha
    assert sha is not None
    return sha


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_reverting_the_middle_of_three_appends_keeps_the_other_two(root: Path) -> None:
    _append(root, "- A: the backup runs at 02:00")
    middle = _append(root, "- B: the staging database is called heron")
    _append(root, "- C: Priya leads billing")
    history = MemoryHistory(root)

    preview = history.preview_revert(middle)
    removed = [row for row in preview.diff.splitlines() if row.startswith("-") and "---" not in row]
    assert preview.applies and removed == ["-- B: the staging database is called heron"]
    assert "@@ -1,3 +1,2 @@" in preview.diff

    outcome = history.revert(middle)

    assert outcome.error is None and outcome.files == [NOTE]
    assert (root / NOTE).read_text() == "- A: the backup runs at 02:00\n- C: Priya leads billing\n"
    subject = _git(root, "log", "-1", "--format=%s")
    assert subject == 'Revert "memory(tool): append 1 line to memory/2026-12-02.md"'
    assert _git(root, "status", "--porcelain") == ""
    [written] = outcome.written
    assert (written.path, written.reason, written.commit) == (NOTE, "revert", outcome.sha)


def test_the_first_append_that_made_the_note_leaves_the_later_lines(root: Path) -> None:
    first = _append(root, "- A")
    _append(root, "- B")
    assert MemoryHistory(root).revert(first).error is None
    assert (root / NOTE).read_text() == "- B\n"


def test_a_line_edited_since_refuses_the_revert_and_names_the_edit(root: Path) -> None:
    target = _append(root, "- the backup runs at 02:00")
    _append(root, "- later fact")
    edit = _write(root, NOTE, "- the backup runs at 03:00\n- later fact\n", "memory(user): fix")
    before, head = (root / NOTE).read_bytes(), _git(root, "rev-parse", "HEAD")
    history = MemoryHistory(root)

    preview = history.preview_revert(target)
    outcome = history.revert(target)

    assert not preview.applies and preview.reason == outcome.error
    assert outcome.sha is None and outcome.error is not None
    assert "'- the backup runs at 02:00'" in outcome.error and NOTE in outcome.error
    assert f"changed by {edit[:7]} memory(user): fix" in outcome.error
    assert (root / NOTE).read_bytes() == before and _git(root, "rev-parse", "HEAD") == head
    assert _git(root, "status", "--porcelain") == ""


def test_a_line_written_twice_loses_only_the_reverted_commits_copy(root: Path) -> None:
    first = _write(root, NOTE, "- x\n", "memory(tool): x")
    _write(root, NOTE, "- x\n- y\n", "memory(tool): y")
    again = _write(root, NOTE, "- x\n- y\n- x\n", "memory(outside): x again")
    history = MemoryHistory(root)

    preview = history.preview_revert(again)
    assert preview.applies and "@@ -1,3 +1,2 @@\n - x\n - y\n-- x\n" in preview.diff
    assert history.revert(again).error is None
    assert (root / NOTE).read_text() == "- x\n- y\n"

    _write(root, NOTE, "- x\n- y\n- x\n", "memory(outside): x once more")
    assert history.revert(first).error is None
    assert (root / NOTE).read_text() == "- y\n- x\n"


def test_the_nearest_copy_goes_and_a_tie_goes_to_the_later_one() -> None:
    added = [AddedLine(1, "- x")]
    assert undo_lines(NOTE, "- x\n- a\n- x\n", added, created=False).removed == [2]
    assert undo_lines(NOTE, "- x\n- x\n", [AddedLine(0, "- x")], created=False).removed == [0]
    shifted = undo_lines(
        NOTE, "- new\n- new2\n- x\n- y\n", [AddedLine(0, "- x"), AddedLine(1, "- y")], created=True
    )
    assert shifted.removed == [2, 3] and not shifted.deleted
    assert undo_lines(NOTE, "- x\n", [AddedLine(0, "- x")], created=True).deleted


def test_what_counts_as_an_append() -> None:
    assert is_daily_note(NOTE) and not is_daily_note("MEMORY.md")
    assert not is_daily_note("memory/projects.md")
    pure = "diff --git a/n b/n\n--- a/n\n+++ b/n\n@@ -2,0 +3,2 @@\n+- a\n++ b\n"
    assert added_lines(pure) == [AddedLine(2, "- a"), AddedLine(3, "+ b")]
    assert added_lines("diff --git a/n b/n\n@@ -2 +2 @@\n-- a\n+- b\n") is None
    assert added_lines("diff --git a/n b/n\nBinary files a/n and b/n differ\n") is None


def test_a_note_whose_line_a_commit_changed_keeps_the_strict_revert(root: Path) -> None:
    _append(root, "- A")
    change = _write(root, NOTE, "- A, corrected\n", "memory(user): correct A")
    later = _append(root, "- B")
    history = MemoryHistory(root)
    outcome = history.revert(change)
    assert outcome.sha is None and outcome.error and "no longer applies" in outcome.error
    assert f"{later[:7]} memory(tool)" in outcome.error
    assert (root / NOTE).read_text() == "- A, corrected\n- B\n"
    assert _git(root, "status", "--porcelain") == ""


def test_memory_md_changed_since_is_refused_naming_the_later_commit(root: Path) -> None:
    target = _append(root, "- tea, no milk", "MEMORY.md")
    edit = _write(
        root,
        "MEMORY.md",
        "# Memory\n\n- deploys on Friday\n- tea with milk\n",
        "memory(user): milk",
    )
    history = MemoryHistory(root)
    preview = history.preview_revert(target)
    outcome = history.revert(target)
    for reason in (preview.reason, outcome.error):
        assert reason and "no longer applies" in reason
        assert f"a later write changed the same lines: {edit[:7]} memory(user): milk" in reason
    assert "tea with milk" in (root / "MEMORY.md").read_text()
    assert outcome.sha is None and _git(root, "rev-parse", "HEAD") == edit


def _both(root: Path) -> str:
    (root / "memory").mkdir(exist_ok=True)
    (root / NOTE).write_text("- A\n")
    _git(root, "add", NOTE)
    (root / "MEMORY.md").write_text("# Memory\n\n- deploys on Friday\n- tea, no milk\n")
    sha = GitStore(root).commit([NOTE, "MEMORY.md"], "memory(flush): two files").sha
    assert sha is not None
    return sha


def test_a_commit_of_a_note_and_memory_md_is_reverted_whole(root: Path) -> None:
    target = _both(root)
    _append(root, "- B")

    preview = MemoryHistory(root).preview_revert(target)
    outcome = MemoryHistory(root).revert(target)

    assert preview.applies and "-- tea, no milk" in preview.diff and "-- A" in preview.diff
    assert outcome.error is None and outcome.files == ["MEMORY.md", NOTE]
    assert (root / NOTE).read_text() == "- B\n"
    assert "tea" not in (root / "MEMORY.md").read_text()
    assert sorted(event.path for event in outcome.written) == ["MEMORY.md", NOTE]
    assert _git(root, "status", "--porcelain") == ""
    assert not (root / ".git" / "REVERT_HEAD").exists()


def test_a_commit_of_both_kinds_is_not_reverted_at_all_when_memory_md_refuses(root: Path) -> None:
    target = _both(root)
    _append(root, "- B")
    _write(
        root, "MEMORY.md", "# Memory\n\n- deploys on Friday\n- tea with milk\n", "memory(user): x"
    )
    before = {path: (root / path).read_bytes() for path in (NOTE, "MEMORY.md")}

    outcome = MemoryHistory(root).revert(target)

    assert outcome.sha is None and outcome.error and "no longer applies" in outcome.error
    assert {path: (root / path).read_bytes() for path in before} == before
    assert _git(root, "status", "--porcelain") == ""
    assert not (root / ".git" / "REVERT_HEAD").exists()


def test_a_last_line_without_a_newline_goes_too(root: Path) -> None:
    _append(root, "- A")
    _append(root, "- B")
    last = _write(root, NOTE, "- A\n- B\n- C", "memory(outside): C, no newline")
    assert MemoryHistory(root).revert(last).error is None
    assert (root / NOTE).read_text() == "- A\n- B\n"
    _write(root, NOTE, "- A\n- B\n- D", "memory(outside): D, no newline")
    assert MemoryHistory(root).revert(_git(root, "rev-parse", "HEAD~3")).error is None
    assert (root / NOTE).read_text() == "- A\n- D"


def test_an_append_to_a_note_without_a_last_newline_is_still_an_append(root: Path) -> None:
    """The door ends the last line before appending; that mended line is no change."""
    _write(root, NOTE, "- A", "memory(outside): A, no newline")
    wrong = _append(root, "- B")
    _append(root, "- C")
    preview = MemoryHistory(root).preview_revert(wrong)
    assert preview.applies and "\n-- B\n" in preview.diff and "\n-- A" not in preview.diff
    assert MemoryHistory(root).revert(wrong).error is None
    assert (root / NOTE).read_text() == "- A\n- C\n"
    mended = "@@ -1 +1,2 @@\n-- A\n\\ No newline at end of file\n+- A\n+- B\n"
    assert added_lines(mended) == [AddedLine(1, "- B")]
    assert added_lines("@@ -1 +1,2 @@\n-[]\n\\ No newline at end of file\n+x\n") is None

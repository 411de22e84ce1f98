"""A change of several files, or a revert, killed half-way is whole or undone at the next start
of any command that changes memory (`shell.recovery`): never one file of two committed, never a
revert's staged tree left for a later commit to carry."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from shell import events as ev
from shell.config import Settings
from shell.git.history import REVERT_JOURNAL, MemoryHistory
from shell.git.store import GitStore
from shell.memory.files.commits import JOURNAL
from shell.memory.files.door import MemoryFiles
from shell.recovery import recover_interrupted
from shell.workspace import init_workspace

NOTE = "memory/2026-11-30.md"
REPO = str(Path(__file__).resolve().parents[2])
TWO_FILES = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    import shell.memory.files.swap as swap
    from shell.git.store import GitStore
    from shell.memory.files.door import MemoryFiles
    from shell.memory.files.values import Edit

    written, real = [], swap._atomic_write
    def write_then_die(path, data):
        if len(written) == int(sys.argv[2]):
            os._exit(137)  # the kill, between two files' swaps or before the commit
        real(path, data)
        written.append(path)
    swap._atomic_write = write_then_die
    if sys.argv[2] == "2":
        GitStore.commit = lambda *a, **k: os._exit(137)
    root = Path(sys.argv[1])
    files = MemoryFiles(root, GitStore(root))
    memory, diary = files.text("MEMORY.md"), files.text("DREAMS.md")
    files.rewrite(
        [Edit("MEMORY.md", memory, memory + "- Tom takes his coffee black\\n"),
         Edit("DREAMS.md", diary, diary + "- **d-1** · add · accepted\\n")],
        reason="dream", summary="accept d-1",
    )
    """
)
REVERT = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from shell.git.history import MemoryHistory
    from shell.git.store import GitStore

    GitStore.commit = lambda *a, **k: os._exit(137)  # the kill: tree changed, no commit
    root = Path(sys.argv[1])
    MemoryHistory(GitStore(root)).revert(sys.argv[2])
    """
)


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    ).stdout


def killed(script: str, *args: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        env={**os.environ, "PYTHONPATH": REPO},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 137, done.stderr


def with_a_diary(settings: Settings) -> GitStore:
    """A seeded workspace whose DREAMS.md is committed: the second file of an acceptance."""
    git_store = init_workspace(settings)
    (settings.workspace / "DREAMS.md").write_text("# Dreams\n")
    git(settings.workspace, "add", "DREAMS.md")
    git(settings.workspace, "commit", "-qm", "diary")
    return git_store


def test_a_change_of_two_files_killed_after_one_is_undone_with_a_notice(
    demo_settings: Settings,
) -> None:
    root = demo_settings.workspace
    git_store = with_a_diary(demo_settings)
    head = git(root, "rev-parse", "HEAD")
    killed(TWO_FILES, str(root), "1")
    assert "Tom takes his coffee black" in (root / "MEMORY.md").read_text()  # the half state
    assert "accepted" not in (root / "DREAMS.md").read_text()

    events = recover_interrupted(root, git_store)

    assert git(root, "rev-parse", "HEAD") == head  # nothing committed
    assert git(root, "status", "--porcelain") == ""  # and the tree is HEAD's again
    assert "Tom" not in (root / "MEMORY.md").read_text()
    [notice] = [e for e in events if isinstance(e, ev.Notice)]
    assert "reached only MEMORY.md" in notice.message
    assert not (root / JOURNAL).exists()


def test_a_change_of_two_files_killed_before_its_commit_is_committed_whole(
    demo_settings: Settings,
) -> None:
    root = demo_settings.workspace
    git_store = with_a_diary(demo_settings)
    killed(TWO_FILES, str(root), "2")

    events = recover_interrupted(root, git_store)

    assert sorted(e.path for e in events if isinstance(e, ev.MemoryWritten)) == [
        "DREAMS.md",
        "MEMORY.md",
    ]
    assert git(root, "show", "--name-only", "--format=", "HEAD").split() == [
        "DREAMS.md",
        "MEMORY.md",
    ]
    assert "Tom takes his coffee black" in git(root, "show", "HEAD:MEMORY.md")
    assert "accepted" in git(root, "show", "HEAD:DREAMS.md")
    assert git(root, "status", "--porcelain") == ""


def test_a_revert_killed_before_its_commit_is_undone_at_the_next_start(
    demo_settings: Settings,
) -> None:
    root = demo_settings.workspace
    git_store = init_workspace(demo_settings)
    files = MemoryFiles(root, git_store)
    written = files.append(NOTE, "- The office wifi is cairn-guest", reason="tool")
    files.append(NOTE, "- Standup is at 9:30", reason="tool")
    head = git(root, "rev-parse", "HEAD")
    killed(REVERT, str(root), written.event.commit or "")
    assert git(root, "status", "--porcelain", "--untracked-files=no")  # the half state
    assert (root / REVERT_JOURNAL).exists()

    events = recover_interrupted(root, git_store)

    assert git(root, "rev-parse", "HEAD") == head
    assert git(root, "status", "--porcelain", "--untracked-files=no") == ""
    assert "cairn-guest" in (root / NOTE).read_text()
    [notice] = [e for e in events if isinstance(e, ev.Notice)]
    assert "was interrupted before its commit" in notice.message
    assert not (root / REVERT_JOURNAL).exists()
    again = MemoryHistory(git_store).revert(written.event.commit or "")  # and it can run again
    assert again.sha is not None
    assert (root / NOTE).read_text().splitlines()[-1] == "- Standup is at 9:30"
    assert "cairn-guest" not in (root / NOTE).read_text()

"""A memory write killed between its file and its commit is Cairn's own at the next start:
committed with its own message and said, never later as "edit made outside Cairn"."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from shell import events as ev
from shell.build import build_agent
from shell.config import Settings
from shell.memory.files.commits import JOURNAL, WriteJournal
from shell.workspace import init_workspace
from tests.core.agent_helpers import collect, of

NOTE = "memory/2026-11-30.md"
KILLED = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from shell.git.store import GitStore
    from shell.memory.files.door import MemoryFiles

    def killed(self, paths, message):
        self._stage(paths)  # staged, then the kill: no commit
        os._exit(137)

    GitStore._stage_and_commit = killed
    root = Path(sys.argv[1])
    MemoryFiles(root, GitStore(root)).append(sys.argv[2], sys.argv[3], reason="tool")
    """
)


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    ).stdout


def killed_append(root: Path, text: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", KILLED, str(root), NOTE, text],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 137, done.stderr


async def test_a_write_killed_before_its_commit_is_committed_as_cairns_with_a_notice(
    demo_settings: Settings,
) -> None:
    root = demo_settings.workspace
    init_workspace(demo_settings)
    killed_append(root, "- Tom takes his coffee black")
    assert "Tom takes his coffee black" in (root / NOTE).read_text()
    assert git(root, "status", "--porcelain").split() == ["A", NOTE]  # staged, uncommitted

    agent = build_agent(demo_settings, index_in_background=False)
    events = await collect(agent.start())
    await agent.aclose()

    (written,) = [e for e in of(events, ev.MemoryWritten) if e.path == NOTE]
    assert written.reason == "tool" and written.commit and not written.outside_edit
    (notice,) = [n for n in of(events, ev.Notice) if "interrupted run" in n.message]
    assert NOTE in notice.message and notice.level == "warning"
    assert git(root, "log", "-1", "--format=%s") == (
        f"memory(tool): append 1 line to {NOTE} (recovered after an interrupted write)\n"
    )
    assert "outside Cairn" not in git(root, "log", "--format=%s")
    assert git(root, "status", "--porcelain") == ""
    assert not (root / JOURNAL).exists()


async def test_a_file_changed_since_the_journal_is_not_claimed_as_cairns(
    demo_settings: Settings,
) -> None:
    root = demo_settings.workspace
    init_workspace(demo_settings)
    killed_append(root, "- Tom takes his coffee black")
    with (root / NOTE).open("a", encoding="utf-8") as editor:
        editor.write("- typed by a person after the kill\n")

    agent = build_agent(demo_settings, index_in_background=False)
    events = await collect(agent.start())
    await agent.aclose()

    assert not [n for n in of(events, ev.Notice) if "interrupted run" in n.message]
    assert "recovered" not in git(root, "log", "--format=%s")
    assert not (root / JOURNAL).exists()


async def test_a_corrupt_journal_is_set_aside_and_said(demo_settings: Settings) -> None:
    root = demo_settings.workspace
    init_workspace(demo_settings)
    (root / JOURNAL).write_text('{"MEMORY.md": {"sha256": 7}}')

    agent = build_agent(demo_settings, index_in_background=False)
    events = await collect(agent.start())
    await agent.aclose()

    (notice,) = [n for n in of(events, ev.Notice) if "journal" in n.message]
    assert "Set aside" in notice.message
    assert not (root / JOURNAL).exists()
    assert list((root / ".cairn").glob("journal.json.corrupt-*"))
    WriteJournal(root).begin({NOTE: b"x"}, "m")  # and the next write journals again
    assert WriteJournal(root).read()[NOTE]["message"] == "m"

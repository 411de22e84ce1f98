"""A revert through the core (`Agent.revert`) on real git: one `MemoryWritten` per file it
changed, kept in the session's view log; a refusal is a notice that changes nothing; and the
revert's commit is pushed like any write (`GitStore.on_commit`), so a bare remote gets it. An
edit in the user's editor is recorded for resume as a revert is."""

from __future__ import annotations

import contextlib
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from shell.agent import Agent
from shell.build import build_agent
from shell.config import Settings
from shell.events import Event, MemoryWritten, Notice, SyncFinished


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout.strip()


async def _events(stream_owner: Agent, sha: str) -> list[Event]:
    async with contextlib.aclosing(stream_owner.revert(sha)) as stream:
        return [event async for event in stream]


def _agent(settings: Settings) -> Agent:
    return build_agent(settings, index_in_background=False, interactive=False)


async def test_a_revert_is_one_memory_written_per_file_and_is_kept_for_resume(
    demo_settings: Settings,
) -> None:
    agent = _agent(demo_settings)
    root = demo_settings.workspace.resolve()
    (root / "MEMORY.md").write_text("# Memory\n\n- deploys on Friday\n- tea, no milk\n")
    (root / "memory").mkdir(exist_ok=True)
    (root / "memory" / "2026-11-30.md").write_text("- a new note\n")
    made = agent.git.commit(["MEMORY.md", "memory/2026-11-30.md"], "memory(tool): two files")
    assert made.sha is not None
    before = (root / "MEMORY.md").read_text()

    events = await _events(agent, made.sha[:7])

    written = [event for event in events if isinstance(event, MemoryWritten)]
    head = _git(root, "rev-parse", "HEAD")
    assert sorted(event.path for event in written) == ["MEMORY.md", "memory/2026-11-30.md"]
    assert {(event.reason, event.commit) for event in written} == {("revert", head)}
    note = next(event for event in written if event.path.startswith("memory/"))
    assert note.bytes == 0 and not (root / "memory" / "2026-11-30.md").exists()  # it made it
    assert "deploys on Friday" not in (root / "MEMORY.md").read_text() != before
    assert _git(root, "log", "-1", "--format=%s") == 'Revert "memory(tool): two files"'
    assert _git(root, "status", "--porcelain") == ""
    agent.conversation.save()
    assert [e for e in agent.conversation.sessions.views.read(agent.session_id)] == written
    await agent.aclose()


async def test_a_refused_revert_is_a_notice_and_changes_nothing(demo_settings: Settings) -> None:
    agent = _agent(demo_settings)
    root = demo_settings.workspace.resolve()
    head = _git(root, "rev-parse", "HEAD")
    events = await _events(agent, "0" * 40)
    assert [type(event) for event in events] == [Notice]
    assert isinstance(events[0], Notice) and events[0].level == "error"
    assert "not reverted" in events[0].message and _git(root, "rev-parse", "HEAD") == head
    await agent.aclose()


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    return remote


async def test_the_revert_reaches_the_remote_as_any_write_does(
    demo_settings: Settings, remote: Path
) -> None:
    settings = replace(demo_settings, remote=str(remote), sync_push_delay=3600.0)
    agent = _agent(settings)
    root = settings.workspace.resolve()
    (root / "MEMORY.md").write_text("# Memory\n\n- the backup runs at 02:00\n")
    target = agent.git.commit(["MEMORY.md"], "memory(tool): the backup").sha
    assert target is not None
    synced = [event async for event in agent.sync_now()]
    assert any(isinstance(event, SyncFinished) for event in synced)
    assert _git(remote, "rev-parse", "main") == target  # pushed; nothing is owed any more

    [written] = [e for e in await _events(agent, target) if isinstance(e, MemoryWritten)]
    await agent.aclose()  # the push the revert owes (its delay is an hour: only at close)

    assert written.commit == _git(root, "rev-parse", "HEAD") == _git(remote, "rev-parse", "main")


async def test_an_edit_in_the_users_editor_is_kept_for_resume_too(
    demo_settings: Settings,
) -> None:
    """F4's write is a stream the view log records, as a revert is: a resumed session shows it."""
    agent = _agent(demo_settings)
    root = demo_settings.workspace.resolve()
    (root / "MEMORY.md").write_text("# Memory\n\n- edited by hand\n")
    async with contextlib.aclosing(agent.edited_by_user("MEMORY.md")) as stream:
        events = [event async for event in stream]
    [written] = [event for event in events if isinstance(event, MemoryWritten)]
    assert written.reason == "user" and written.commit == _git(root, "rev-parse", "HEAD")
    agent.conversation.save()
    kept = agent.conversation.sessions.views.read(agent.session_id)
    assert [event for event in kept if isinstance(event, MemoryWritten)] == [written]
    await agent.aclose()

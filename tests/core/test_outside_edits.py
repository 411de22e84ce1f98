"""An edit made outside Cairn is committed on its own: once it settles (the file watcher), or
just before a Cairn commit that would otherwise carry it. Real agent, real git, real watcher."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from shell import events as ev
from shell.config import Settings
from tests.core.agent_helpers import collect, of, started
from tests.git_read import commit, commits, git

NOTE = "memory/2026-11-30.md"


async def test_a_settled_outside_edit_is_committed_on_its_own(demo_settings: Settings) -> None:
    agent = await started(replace(demo_settings, watch=True))
    await collect(agent.submit("remember that the office opens at 8"))
    stream = agent.background_events()
    await asyncio.wait_for(agent.recall.watching(), 60)
    note = demo_settings.workspace / NOTE
    note.write_text(note.read_text() + "- typed in another shell: OPS-77 is on call\n")

    event = await asyncio.wait_for(anext(stream), timeout=60)
    while not isinstance(event, ev.MemoryWritten):
        event = await asyncio.wait_for(anext(stream), timeout=60)

    head = commit(demo_settings.workspace)
    assert head.message == f"edit made outside Cairn: {NOTE}\n"
    assert (event.path, event.commit, event.outside_edit) == (NOTE, head.sha, True)
    assert event.lines_added == 1
    assert git(demo_settings.workspace, "status", "--porcelain", "--", NOTE) == ""
    await agent.aclose()


async def test_a_cairn_write_commits_a_pending_outside_edit_first(demo_settings: Settings) -> None:
    agent = await started(demo_settings)  # no watcher: the write path alone must do it
    await collect(agent.submit("remember that the office opens at 8"))
    note = demo_settings.workspace / NOTE
    note.write_text(note.read_text() + "- typed in another shell\n")

    events = await collect(agent.submit("remember that the printer is on floor 2"))

    outside, mine = of(events, ev.MemoryWritten)
    root = demo_settings.workspace
    head, before = commits(root)[:2]
    assert before.message == f"edit made outside Cairn: {NOTE}\n" and outside.outside_edit
    assert outside.commit == before.sha and mine.commit == head.sha
    assert "+- typed in another shell" in git(root, "diff", f"{before.sha}~1", before.sha)
    cairn_diff = git(root, "diff", before.sha, head.sha, "--unified=0")
    assert "printer" in cairn_diff and "typed in another shell" not in cairn_diff
    await agent.aclose()


async def test_an_edit_in_the_users_editor_is_committed_as_theirs(demo_settings: Settings) -> None:
    agent = await started(demo_settings)
    dreams = demo_settings.workspace / "DREAMS.md"
    dreams.write_text(dreams.read_text() + "- a hand-written dream\n")

    events = await collect(agent.edited_by_user("DREAMS.md"))
    assert commit(demo_settings.workspace).message == "edit by the user in $EDITOR: DREAMS.md\n"
    written = of(events, ev.MemoryWritten)[0]
    assert (written.reason, written.outside_edit, written.commit) == (
        "user",
        False,
        commit(demo_settings.workspace).sha,
    )

    again = await collect(agent.edited_by_user("DREAMS.md"))
    assert [e.message for e in of(again, ev.Notice)] == [
        "DREAMS.md unchanged in the editor: nothing to commit"
    ]
    refused = of(await collect(agent.edited_by_user("../outside.md")), ev.Notice)
    assert refused[0].level == "error"
    assert commit(demo_settings.workspace).message == "edit by the user in $EDITOR: DREAMS.md\n"
    await agent.aclose()


async def test_a_settled_outside_edit_with_a_nul_byte_is_committed_with_a_warning(
    demo_settings: Settings,
) -> None:
    agent = await started(replace(demo_settings, watch=True))
    await collect(agent.submit("remember that the office opens at 8"))
    stream = agent.background_events()
    await asyncio.wait_for(agent.recall.watching(), 60)
    note = demo_settings.workspace / NOTE
    note.write_bytes(note.read_bytes() + b"- pasted: \x00\x01\x02\n")

    event = await asyncio.wait_for(anext(stream), timeout=60)
    while not isinstance(event, ev.MemoryWritten):
        event = await asyncio.wait_for(anext(stream), timeout=60)
    warning = await asyncio.wait_for(anext(stream), timeout=60)

    assert event.outside_edit and event.commit == commit(demo_settings.workspace).sha
    assert isinstance(warning, ev.Notice) and warning.level == "warning"
    assert NOTE in warning.message and "NUL bytes" in warning.message
    await agent.aclose()

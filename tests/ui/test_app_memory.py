"""Pilot tests of memory on screen: the search card, memory writes in the transcript, the memory
file panes and the git log."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from shell.build import build_agent
from shell.events import (
    CappedFile,
    IndexSynced,
    MemoryWritten,
    SearchHit,
    SearchPerformed,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    TurnStarted,
)
from tests.git_read import commit
from tests.ui.conftest import MakeApp, demo_settings, send, started, until
from tests.ui.fakes import SESSION_ID, TODAY, FakeAgent
from tests.ui.pilot_helpers import ASKED, DAILY, SIZE, TOLD, painted
from widgets.app import CairnApp
from widgets.cards.blocks import MemoryWriteLine, NoticeLine
from widgets.cards.reply import AssistantReply
from widgets.cards.tool_call import ToolCallCard
from widgets.messages import AgentEvent
from widgets.panes.memory import MemoryFilePane


async def test_search_card_shows_query_mode_and_scores(demo_app: MakeApp) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await send(app, pilot, TOLD)
        await send(app, pilot, ASKED)

        card = app.query(ToolCallCard).last()
        assert card.tool_name == "memory_search" and card.has_class("-search")
        assert card.finished is not None and card.finished.duration_ms == 12.0
        assert card.search is not None and card.search.call_id == card.call_id
        search = painted(card.query_one(".tool-call--search", Static))
        assert f"query {ASKED}" in search and "mode hybrid" in search
        hit = next(line for line in search.splitlines() if f"{DAILY}#L1-L1" in line)
        scores = [float(value) for value in hit.split()[-3:]]
        assert scores[0] == round(card.search.hits[0].score, 2)
        assert "✓ 12 ms" in painted(card.query_one(".tool-call--header", Static))

        details = card.query_one(".tool-call--details", Static)
        assert not details.display or not card.expanded
        await pilot.click(card.query_one(".tool-call--header"))
        assert card.expanded and card.has_class("-expanded")
        assert (
            app.query(AssistantReply)
            .last()
            .source.startswith("From memory: our deploy window is Friday 14:00")
        )


async def test_search_with_nothing_relevant_and_degraded_mode(workspace: Path) -> None:
    agent = FakeAgent(workspace)
    agent.turns["recall"] = [
        TurnStarted(SESSION_ID, 1, "recall"),
        ToolCallStarted("s1", "memory_search", {"query": "kubernetes"}),
        SearchPerformed(
            "kubernetes",
            "keyword-only",
            [],
            degraded_reason="embedder failed",
            nothing_relevant=True,
            time_frame="last week: 2026-11-23 to 2026-11-29",
            call_id="s1",
        ),
        ToolCallFinished("s1", "memory_search", "[]"),
        TurnFinished(1, "completed"),
    ]
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "recall")
        text = painted(app.query_one(ToolCallCard).query_one(".tool-call--search", Static))
        assert "mode keyword-only" in text
        assert "degraded: embedder failed" in text
        assert "time named: last week: 2026-11-23 to 2026-11-29" in text
        assert "memory holds nothing relevant" in text


async def test_a_reranked_search_shows_the_rerank_score_beside_vector_and_text(
    workspace: Path,
) -> None:
    agent = FakeAgent(workspace)
    hit = SearchHit(
        "memory/2026-11-30.md",
        3,
        4,
        0.91,
        0.62,
        0.4,
        "deploy window",
        "memory/2026-11-30.md#L3-L4",
        rerank_score=0.91,
    )
    agent.turns["recall"] = [
        TurnStarted(SESSION_ID, 1, "recall"),
        ToolCallStarted("s1", "memory_search", {"query": "deploy"}),
        SearchPerformed("deploy", "hybrid", [hit], call_id="s1", reranker="ms-marco"),
        ToolCallFinished("s1", "memory_search", "[]"),
        TurnFinished(1, "completed"),
    ]
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "recall")
        card = app.query_one(ToolCallCard)
        text = painted(card.query_one(".tool-call--search", Static))
        assert "mode hybrid + rerank" in text
        assert "rerank" in text.split("mode")[1] and "0.91" in text
        assert "hit memory/2026-11-30.md#L3-L4 0.91 0.62 0.40 0.91" in card.describe()


async def test_memory_write_updates_daily_note_pane_and_git_log(
    demo_app: MakeApp, workspace: Path
) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        today = app.query_one("#pane-today", MemoryFilePane)
        assert "does not exist yet" in today.text
        await send(app, pilot, TOLD)

        assert today.path.resolve() == (workspace / DAILY).resolve()
        assert "- our deploy window is Friday 14:00" in today.text
        assert app.query_one("#memory-tabs").active == "tab-today"
        (line,) = app.query(MemoryWriteLine)
        head = commit(workspace)
        assert f"{DAILY}  +1 line " in line.text and f"→ {head.sha[:7]}" in line.text
        git_log = app.side_panes.git_log
        assert git_log.commits[0].short == head.sha[:7]
        await pilot.click("#activity-tabs Tab#--content-tab-tab-git")
        await pilot.pause()
        shown = " ".join(painted(git_log.query_one(Static)).split())
        assert f"{head.sha[:7]} memory(tool): append 1 line to {DAILY}" in shown


async def test_edits_made_outside_cairn_show_on_the_next_poll(
    demo_app: MakeApp, workspace: Path
) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        pane = app.query_one("#pane-memory", MemoryFilePane)
        assert "curated long-term memory" in pane.text
        assert app.side_panes.poll_timer is not None, "nothing watches the files: the panes poll"
        (workspace / "MEMORY.md").write_text("# Memory\n\n- Database: MariaDB\n", encoding="utf-8")
        await app.side_panes.reread()  # what the poll's timer calls
        assert "MariaDB" in pane.text
        assert not await pane.reload(), "an unchanged file is not re-read"


async def eventually(pilot: Pilot[None], condition: Callable[[], bool]) -> None:
    """Until `condition` holds, for what a thread or the file watcher does: a bound of 30 s,
    not a timing."""
    for _ in range(600):
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError("condition never became true")


async def test_with_watching_on_the_panes_follow_the_cores_events_once_it_watches(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The core watches the files from its first index sync on (after the first turn): the
    panes poll until it says that sync is done, then only its events move them."""
    monkeypatch.chdir(workspace.parent)
    agent = build_agent(demo_settings(Path(workspace.name), watch=True))
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        assert app.side_panes.poll_timer is not None, "no watcher yet: the panes poll"
        await send(app, pilot, TOLD)
        assert "Friday 14:00" in app.query_one("#pane-today", MemoryFilePane).text
        await asyncio.wait_for(agent.recall.watching(), 60)
        await until(pilot, lambda: app.side_panes.poll_timer is None)

        pane = app.query_one("#pane-memory", MemoryFilePane)
        (workspace / "MEMORY.md").write_text("# Memory\n\n- Database: MariaDB\n", encoding="utf-8")
        await eventually(pilot, lambda: "MariaDB" in pane.text)  # the watcher lets it settle
        lines = [line.text for line in app.query(MemoryWriteLine)]
        assert any("MEMORY.md" in text and "edit made outside Cairn" in text for text in lines)
        assert app.side_panes.poll_timer is None
        log = app.side_panes.git_log  # the event's route ends with the git log: wait for it
        await eventually(pilot, lambda: "outside" in log.commits[0].message)


async def test_with_watching_off_the_first_index_sync_leaves_the_poll_running(
    demo_app: MakeApp,
) -> None:
    app = demo_app(watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        side = app.side_panes
        await app.on_agent_event(AgentEvent(IndexSynced(3, 0, 9, 9, 1.0, "session_start")))
        assert side.poll_timer is not None


async def test_an_index_sync_that_changed_files_rereads_the_panes(
    demo_app: MakeApp, workspace: Path
) -> None:
    """A git pull made outside Cairn commits nothing of its own: the index sync the watcher
    runs after it is what says the files changed."""
    app = demo_app(watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await app.on_agent_event(AgentEvent(IndexSynced(0, 0, 9, 0, 1.0, "session_start")))
        assert app.side_panes.poll_timer is None
        pane = app.query_one("#pane-memory", MemoryFilePane)
        (workspace / "MEMORY.md").write_text("# Memory\n\n- Database: MariaDB\n", encoding="utf-8")
        await app.on_agent_event(AgentEvent(IndexSynced(1, 0, 9, 1, 1.0, "watch"), background=True))
        assert "MariaDB" in pane.text


async def test_a_file_too_large_to_index_whole_is_said_once_and_again_when_it_changes(
    demo_app: MakeApp,
) -> None:
    app = demo_app(watch=False)
    capped = [CappedFile("MEMORY.md", 20_000)]
    grown = [CappedFile("MEMORY.md", 20_410)]  # its first units changed: search sees further
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        # the own memory's syncs, with the global memory's (nothing capped) between them
        for files, chunks in ((capped, 9), ([], 1), (capped, 9), (grown, 9)):
            synced = IndexSynced(0, 0, chunks, 0, 1.0, "watch", capped=files)
            await app.on_agent_event(AgentEvent(synced, background=True))
        await pilot.pause()
        said = [n for n in app.query(NoticeLine) if "too large to index whole" in n.text]
        assert [n.text.count("MEMORY.md") for n in said] == [1, 1]
        assert "(to line 20,000)" in said[0].text and "(to line 20,410)" in said[1].text
        assert said[0].has_class("-warning")


async def test_commit_failure_is_shown_in_error_colour(workspace: Path) -> None:
    agent = FakeAgent(workspace)
    agent.turns["save"] = [
        MemoryWritten("MEMORY.md", 12, None, "tool", lines_added=2, commit_error="index.lock held")
    ]
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "save")
        line = app.query_one(MemoryWriteLine)
        assert line.has_class("-commit-failed")
        assert "not committed: index.lock held" in line.text


async def test_remembering_something_again_is_shown_as_unchanged(demo_app: MakeApp) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await send(app, pilot, TOLD)
        await send(app, pilot, TOLD)
        first, again = app.query(MemoryWriteLine)
        assert not first.has_class("-commit-failed") and "→ " in first.text
        assert again.has_class("-unchanged") and not again.has_class("-commit-failed")
        assert "unchanged, already in memory (1 line)" in again.text
        assert "not committed" not in again.text


async def test_a_project_sessions_hits_and_writes_name_their_memory(workspace: Path) -> None:
    agent = FakeAgent(workspace)
    note = f"memory/{TODAY}.md"  # the global note the Today pane shows, by the project's name
    (workspace / "memory").mkdir(parents=True, exist_ok=True)
    (workspace / note).write_text("# global note\n\n- the user likes tea\n")
    hit = SearchHit(
        "MEMORY.md", 2, 2, 0.8, 0.7, 0.3, "tabs", "MEMORY.md#L2-L2", scope="project:heron"
    )
    user_hit = SearchHit("MEMORY.md", 5, 5, 0.6, 0.6, 0.0, "tea", "MEMORY.md#L5-L5")
    written = MemoryWritten(note, 40, "abc1234", "tool", lines_added=1, scope="project:heron")
    agent.turns["recall"] = [
        TurnStarted(SESSION_ID, 1, "recall"),
        ToolCallStarted("s1", "memory_search", {"query": "tabs"}),
        SearchPerformed("tabs", "hybrid", [hit, user_hit], call_id="s1"),
        ToolCallFinished("s1", "memory_search", "[]"),
        written,
        TurnFinished(1, "completed"),
    ]
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "recall")
        card = app.query_one(ToolCallCard)
        assert "[project:heron] MEMORY.md#L2-L2" in painted(
            card.query_one(".tool-call--search", Static)
        )
        assert "hit [project:heron] MEMORY.md#L2-L2" in card.describe()
        assert "hit MEMORY.md#L5-L5" in card.describe()  # the global memory goes unmarked
        line = painted(app.query(MemoryWriteLine).last())
        assert line.strip().startswith(f"✎ [project:heron] {note}")
        today = app.query_one("#pane-today", MemoryFilePane)  # the global note, untouched
        assert "likes tea" in today.text and not today.written

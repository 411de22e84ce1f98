"""Pilot tests: the TUI driven by a scripted agent, asserting on widgets and posted messages."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from pathlib import Path

from textual.geometry import Region
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Collapsible, Label, Static

from shell.events import (
    AssistantMessage,
    BootstrapMissing,
    BootstrapTruncated,
    CompactionFailed,
    CompactionFinished,
    CompactionSkipped,
    CompactionStarted,
    ContextReport,
    Error,
    FlushFinished,
    FlushStarted,
    GitLockCleared,
    IndexRebuilt,
    IndexSynced,
    IndexSyncProgress,
    Loading,
    MemoryWritten,
    ModelRetry,
    Notice,
    SearchPerformed,
    SecretsRedacted,
    StartupPreludeInjected,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    TurnsDropped,
    TurnStarted,
    UsageUpdated,
)
from shell.heavy_import import collector_paused
from tests.ui.conftest import send, settle, until
from tests.ui.fakes import SESSION_ID, FakeAgent
from tests.ui.scenarios import (
    ANSWER,
    ASK,
    BUDGET,
    COMPACT,
    DAILY,
    REMEMBER,
    SLOW,
    conversation_agent,
    gate,
    usage,
)
from widgets.app import CairnApp
from widgets.blocks import (
    AssistantReply,
    CompactionReceipt,
    MemoryWriteLine,
    NoticeLine,
    UserMessage,
)
from widgets.memory_panes import MemoryFilePane
from widgets.messages import AgentEvent
from widgets.tool_call import ToolCallCard

SIZE = (120, 40)


def painted(widget: Widget) -> str:
    """The text a widget paints on screen, line by line."""
    width, height = widget.region.size
    return "\n".join(strip.text for strip in widget.render_lines(Region(0, 0, width, height)))


def routed(seen: list[Message]) -> list[object]:
    return [m.event for m in seen if isinstance(m, AgentEvent)]


async def test_prompt_shows_user_message_and_streamed_answer(workspace: Path) -> None:
    agent = conversation_agent(workspace)
    seen: list[Message] = []
    app = CairnApp(agent)
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await settle(app, pilot)
        await send(app, pilot, ASK, typed=True)

        assert agent.submitted == [ASK]
        assert app.prompt.value == ""
        users = [u.text for u in app.query(UserMessage)]
        assert users == [ASK], "the echo and turn_started must show the prompt once"
        (reply,) = app.query(AssistantReply)
        assert reply.source == ANSWER
        deltas = [e.text for e in routed(seen) if isinstance(e, TextDelta)]
        assert "".join(deltas) == "We use **Postgres 16** (MEMORY.md#L3-L4)."
        assert not app.busy


async def test_search_card_shows_query_mode_and_scores(workspace: Path) -> None:
    app = CairnApp(conversation_agent(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, ASK)

        card = app.query_one(ToolCallCard)
        assert card.tool_name == "memory_search" and card.has_class("-search")
        assert card.finished is not None and card.finished.duration_ms == 12.0
        search = painted(card.query_one(".tool-call--search", Static))
        assert "query database" in search and "mode hybrid" in search
        first = next(line for line in search.splitlines() if "MEMORY.md#L3-L4" in line)
        assert first.split()[-3:] == ["0.82", "0.71", "0.93"]
        second = next(line for line in search.splitlines() if "2026-04-30" in line)
        assert second.split()[-3:] == ["0.41", "0.44", "—"]
        assert "✓ 12 ms" in painted(card.query_one(".tool-call--header", Static))

        details = card.query_one(".tool-call--details", Static)
        assert not details.display or not card.expanded
        await pilot.click(card.query_one(".tool-call--header"))
        assert card.expanded and card.has_class("-expanded")


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


async def test_memory_write_updates_daily_note_pane_and_git_log(workspace: Path) -> None:
    app = CairnApp(conversation_agent(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        today = app.query_one("#pane-today", MemoryFilePane)
        assert "does not exist yet" in today.text
        await send(app, pilot, REMEMBER)

        assert today.path == workspace / DAILY
        assert "- Deploys happen on Fridays." in today.text
        assert app.query_one("#memory-tabs").active == "tab-today"
        (line,) = app.query(MemoryWriteLine)
        assert "memory/2026-05-01.md" in line.text and "+1 line " in line.text
        assert "→ a1b2c3d" in line.text
        git_log = app.side_panes.git_log
        assert [c.short for c in git_log.commits] == ["a1b2c3d"]
        await pilot.click("#activity-tabs Tab#--content-tab-tab-git")
        await pilot.pause()
        assert "a1b2c3d memory: daily note" in painted(git_log.query_one(Static))


async def test_edits_made_outside_cairn_show_on_the_next_poll(workspace: Path) -> None:
    app = CairnApp(conversation_agent(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = app.query_one("#pane-memory", MemoryFilePane)
        assert "Postgres 16" in pane.text
        (workspace / "MEMORY.md").write_text("# Memory\n\n- Database: MariaDB\n", encoding="utf-8")
        await app.side_panes.poll()
        assert "MariaDB" in pane.text
        assert not await pane.reload(), "an unchanged file is not re-read"


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


async def test_gate_decisions_appear_in_the_gate_log(workspace: Path) -> None:
    app = CairnApp(conversation_agent(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        for prompt in (ASK, REMEMBER, COMPACT):
            await send(app, pilot, prompt)

        entries = app.side_panes.gate_log.entries
        assert [e.event.flush for e in entries] == [False, False, True]
        assert entries[0].summary.startswith("#1 no · 1.3k/5.4k")
        assert entries[2].has_class("-flush") and "#3 flush" in entries[2].summary
        conditions = entries[2].query_one(".gate--conditions", Static)
        assert not conditions.display
        await pilot.click(entries[2])
        assert entries[2].expanded and conditions.display
        text = " ".join(painted(conditions).split())
        assert f"✓ tokens = 5600 (threshold {BUDGET.flush_threshold})" in text


async def test_meter_follows_usage_and_threshold_states(workspace: Path) -> None:
    agent = FakeAgent(workspace)
    near, over = int(BUDGET.flush_threshold * 0.9), BUDGET.flush_threshold + 10
    agent.start_script = [usage(1234)]
    agent.turns = {
        "near": [usage(near)],
        "over": [usage(over)],
        "compact": [CompactionStarted("threshold", over)],
        "done": [
            CompactionFinished("threshold", over, 1900, 3, 4, 900.0, "- summary", 1),
            usage(1900),
        ],
    }
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        meter = app.status_bar.meter
        assert (meter.used, meter.window) == (1234, BUDGET.window)
        assert meter.label == "1.2k / 8.2k"
        assert meter.has_class("-ok") and meter.state == "ok"
        bar = painted(meter)
        assert bar.startswith("1.2k / 8.2k ") and bar.count("│") == 2

        await send(app, pilot, "near")
        assert meter.has_class("-near-flush") and not meter.has_class("-ok")
        await send(app, pilot, "over")
        assert meter.has_class("-over-flush")
        await send(app, pilot, "compact")
        assert meter.has_class("-compacting")
        await send(app, pilot, "done")
        assert meter.has_class("-ok") and app.status_bar.compactions.count == 1
        assert "🗜 1" in painted(app.status_bar.compactions)


async def test_flush_and_compaction_receipt(workspace: Path) -> None:
    app = CairnApp(conversation_agent(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, REMEMBER)
        await send(app, pilot, COMPACT)

        transcript = app.transcript.describe()
        assert "flush: written 1 line to memory/2026-05-01.md → b2c3d4e" in transcript
        receipt = app.query_one(CompactionReceipt)
        assert receipt.border_title == "compaction #1"
        assert "manual: 5.6k → 1.9k tokens" in receipt.text
        assert "2 turns summarised" in receipt.text
        summary = receipt.query_one(Collapsible)
        assert summary.collapsed
        assert "re-injected after compaction: Session Startup, Red Lines" in transcript
        assert [u.text for u in app.query(UserMessage)][-1] == COMPACT


async def test_retry_discards_partial_text(workspace: Path) -> None:
    agent = FakeAgent(workspace)
    agent.turns["hi"] = [
        TurnStarted(SESSION_ID, 1, "hi"),
        TextDelta("half an ans"),
        ModelRetry(1, 4, 1.0, "rate limited", discard_partial=True),
        TextDelta("Hello!"),
        AssistantMessage("Hello!"),
        Error("overflow", "context too long, compacting"),
        TurnFinished(1, "completed"),
    ]
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "hi")
        assert [r.source for r in app.query(AssistantReply)] == ["Hello!"]
        notices = {n.text: n for n in app.query(NoticeLine)}
        assert "retrying (1/4) in 1 s: rate limited" in notices
        assert notices["error (overflow): context too long, compacting"].has_class("-error")


async def test_escape_cancels_a_slow_turn_cleanly(workspace: Path) -> None:
    agent = conversation_agent(workspace)
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.prompt.value = SLOW
        await pilot.press("enter")
        await until(pilot, lambda: bool(app.query(AssistantReply)))
        assert app.busy and app.prompt.has_class("-busy")

        app.prompt.value = ASK
        await pilot.press("enter")
        assert list(app.queued) == [ASK]
        await pilot.press("escape")
        await settle(app, pilot)

        assert not app.busy and not app.queued
        assert agent.closed_streams == 2, "start and the slow turn were both closed"
        notices = [n.text for n in app.query(NoticeLine)]
        assert "turn cancelled" in notices and "dropped 1 queued prompt(s)" in notices
        assert "never reached" not in app.transcript.describe()

        await send(app, pilot, ASK)
        assert app.query(AssistantReply).last().source == ANSWER


async def test_a_prompt_sent_during_a_turn_runs_after_it(workspace: Path) -> None:
    agent = conversation_agent(workspace)
    release = asyncio.Event()
    agent.turns["wait"] = [
        TurnStarted(SESSION_ID, 1, "wait"),
        release,
        TurnFinished(1, "completed"),
    ]
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.prompt.value = "wait"
        await pilot.press("enter")
        await until(pilot, lambda: app.busy)
        app.prompt.value = ASK
        await pilot.press("enter")
        assert list(app.queued) == [ASK]
        release.set()
        await until(pilot, lambda: agent.submitted == ["wait", ASK])
        await settle(app, pilot)
        assert app.query(AssistantReply).last().source == ANSWER
        assert [u.text for u in app.query(UserMessage)] == ["wait", ASK]


async def test_a_crashing_core_becomes_an_error_line(workspace: Path) -> None:
    agent = FakeAgent(workspace)

    def explode() -> None:
        raise RuntimeError("boom")

    agent.turns["x"] = [explode]
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "x")
        assert "error (crash): RuntimeError: boom" in [n.text for n in app.query(NoticeLine)]
        assert not app.busy


async def test_keys_clear_toggle_panes_and_cycle_theme(workspace: Path) -> None:
    app = CairnApp(conversation_agent(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, ASK)
        assert app.theme == "cairn"
        await pilot.press("ctrl+t")
        assert app.theme == "cairn-light"
        await pilot.press("ctrl+t")
        assert app.theme == "cairn"

        side = app.side_panes
        assert side.display
        await pilot.press("f2")
        await pilot.pause()
        assert not side.display
        await pilot.press("f2")
        await pilot.pause()
        assert side.display

        await pilot.press("ctrl+l")
        await pilot.pause()
        assert not app.transcript.children
        assert app.focused is app.prompt


async def test_narrow_terminal_hides_the_side_panes_until_f2(workspace: Path) -> None:
    app = CairnApp(conversation_agent(workspace))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        assert app.screen.has_class("-narrow")
        assert not app.side_panes.display and app.transcript.display
        await pilot.press("f2")
        await pilot.pause()
        assert app.side_panes.display and not app.transcript.display
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert not app.screen.has_class("-narrow")


async def test_lifecycle_events_without_a_happy_ending_are_shown(workspace: Path) -> None:
    agent = FakeAgent(workspace)
    agent.start_script = [
        BootstrapTruncated("AGENTS.md", 30_000, 20_000, "per_file"),
        BootstrapMissing("SOUL.md"),
        StartupPreludeInjected(["memory/2026-04-30.md"], 1800),
        IndexSyncProgress(3, 10, 12, 12),
    ]
    agent.turns["go"] = [
        FlushStarted(DAILY, 2, "tokens"),
        FlushFinished("no_reply", DAILY, 2),
        FlushStarted(DAILY, 2, "tokens"),
        FlushFinished("ignored", DAILY, 2, error="answered without memory_append", failures=2),
        FlushFinished("exhausted", DAILY, 2, failures=3),
        CompactionStarted("threshold", 6200),
        CompactionSkipped("nothing to compact"),
        CompactionStarted("overflow", 7000),
        CompactionFailed("overflow", "summary too long", 2),
        IndexRebuilt("embedder changed"),
        GitLockCleared(".git/index.lock", 120.0),
        SecretsRedacted("memory/2026-04-30.md", ["AWS Access Key"]),
        Notice("flush exhausted for this cycle", "warning"),
        TurnFinished(1, "tool_limit"),
    ]
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert painted(app.status_bar.index_status).strip() == "indexing 3/10"
        await send(app, pilot, "go")
        text = app.transcript.describe()
        for expected in (
            "warning: AGENTS.md truncated for the prompt: kept 20000 of 30000 chars",
            "info: SOUL.md is missing",
            "startup prelude: recent notes memory/2026-04-30.md (1.8k chars)",
            "flush: NO_REPLY — nothing worth saving (cycle 2)",
            "flush: ignored (failure 2): answered without memory_append",
            "flush: exhausted after 3 failures",
            "compaction: skipped: nothing to compact",
            "compaction: failed (overflow) after 2 attempts: summary too long",
            "warning: memory index rebuilt from the files: embedder changed",
            "warning: cleared a stale git lock .git/index.lock (120 s old)",
            "warning: redacted from memory/2026-04-30.md before the commit: AWS Access Key",
            "warning: flush exhausted for this cycle",
            "warning: turn ended: tool_limit",
        ):
            assert expected in text
        assert not app.status_bar.meter.has_class("-compacting")
        assert all(
            r.has_class("-skipped") or r.has_class("-failed") for r in app.query(CompactionReceipt)
        )

        agent.turns["sync"] = [IndexSynced(1, 0, 42, 1, 12.0, "watch")]
        await send(app, pilot, "sync")
        assert painted(app.status_bar.index_status).strip() == "index 42 chunks"


async def test_a_prompt_typed_before_the_agent_started_waits_and_is_answered(
    workspace: Path,
) -> None:
    agent = conversation_agent(workspace)
    ready = asyncio.Event()
    agent.start_script = [ready, *agent.start_script]  # a start that takes its time
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        assert app.busy, "until the agent has started, a prompt waits in the queue"
        await pilot.press(*ASK)
        await pilot.press("ctrl+j")  # an Enter typed ahead reaches us as "\n" (the tty's ICRNL)
        assert list(app.queued) == [ASK] and agent.submitted == []
        ready.set()
        await until(pilot, lambda: agent.submitted == [ASK])
        await settle(app, pilot)
        assert app.query(AssistantReply).last().source == ANSWER


async def test_the_status_bar_names_what_is_still_loading(workspace: Path) -> None:
    agent = conversation_agent(workspace)
    loaded = asyncio.Event()
    agent.turns["hi"] = [
        TurnStarted(SESSION_ID, 1, "hi"),
        Loading("model", done=False),
        loaded,
        Loading("model", done=True),
        TurnFinished(1, "completed"),
    ]
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        label = app.query_one("#status-loading", Label)
        assert not label.display or label.has_class("-idle")
        app.prompt.value = "hi"
        await pilot.press("enter")
        await until(pilot, lambda: not label.has_class("-idle"))
        assert "loading model…" in painted(label)
        loaded.set()
        await settle(app, pilot)
        assert label.has_class("-idle")


async def test_a_summary_by_rule_says_so_in_the_receipt(workspace: Path) -> None:
    agent = FakeAgent(workspace)
    agent.turns["/compact"] = [
        CompactionStarted("manual", 5600, None),
        CompactionFinished(
            trigger="manual",
            tokens_before=5600,
            tokens_after=1900,
            turns_summarised=2,
            messages_kept=4,
            duration_ms=30.0,
            summary="## Decisions\n- none",
            compaction_count=1,
            attempts=2,
            fallback="the model's summary failed the check: missing headings: ## Decisions",
        ),
    ]
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "/compact")
        receipt = app.query_one(CompactionReceipt)
        assert "summary by rule (the model's summary failed the check" in receipt.text
        assert str(receipt.query_one(Collapsible).title) == "summary by rule"


async def test_a_model_call_that_fails_for_good_voids_its_text_on_screen(workspace: Path) -> None:
    agent = FakeAgent(workspace)
    agent.turns["hi"] = [
        TurnStarted(SESSION_ID, 1, "hi"),
        TextDelta("The fake "),
        Error("unavailable", "the stream ended before the answer did", discard_partial=True),
        TurnFinished(1, "error"),
    ]
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "hi")
        assert list(app.query(AssistantReply)) == []
        notices = [n.text for n in app.query(NoticeLine)]
        assert "error (unavailable): the stream ended before the answer did" in notices


async def test_context_report_and_dropped_turns_are_shown(workspace: Path) -> None:
    agent = FakeAgent(workspace)
    agent.turns["/context"] = [
        ContextReport(
            usage=UsageUpdated(
                window=2048,
                window_source="config",
                prompt_tokens=900,
                counted_prompt_tokens=1700,
                reported_prompt_tokens=850,
                calibrated=True,
                flush_threshold=1344,
                compaction_threshold=1536,
                breakdown={"system": 700, "tools": 348, "messages": 652},
            ),
            messages=6,
            compactions=1,
            compact_tools=True,
            bootstrap_file_budget=1024,
            bootstrap_total_budget=2048,
            bootstrap_chars={"AGENTS.md": 800, "SOUL.md": 144, "MEMORY.md": 1024},
            bootstrap_cut={"MEMORY.md": 31_000},
        ),
        TurnsDropped(
            turns=2, messages=5, tokens_before=2300, tokens_after=1200, window=2048, flushed=True
        ),
    ]
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "/context")
        text = app.transcript.describe()
        for expected in (
            "prompt 900 of 2,048 tokens (config) · calibrated by the provider: it counted 850",
            "tool schemas: compact (small window)",
            "MEMORY.md: 1,024 of 31,000 chars in the prompt; the rest is left out, read it with "
            'memory_get("MEMORY.md")',
            "SOUL.md: 144 chars in the prompt",
            "warning: context full: the oldest 2 turns (5 messages) left the context, 2.3k → 1.2k",
        ):
            assert expected in text


async def test_gate_decisions_before_the_side_panes_mount_are_shown_once(workspace: Path) -> None:
    agent = FakeAgent(workspace)
    agent.start_script = [gate(False, 900), gate(True, 5600)]  # the moment the agent starts
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.pause()
        entries = app.side_panes.gate_log.entries
        assert [e.event.flush for e in entries] == [False, True]
        assert [e.summary.split(" ")[0] for e in entries] == ["#1", "#2"]


async def test_the_collector_paused_for_start_up_resumes_once_the_first_frame_is_up(
    workspace: Path,
) -> None:
    startup = contextlib.ExitStack()  # as `cairn` does before it builds the TUI
    startup.enter_context(collector_paused())
    app = CairnApp(conversation_agent(workspace), after_first_frame=startup.close)
    try:
        assert not gc.isenabled()
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            assert gc.isenabled()
    finally:
        startup.close()

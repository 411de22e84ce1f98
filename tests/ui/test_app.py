"""Pilot tests: the TUI driven by a scripted agent, asserting on widgets and posted messages."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import re
from pathlib import Path

import git
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
)
from shell.heavy_import import collector_paused
from tests.ui.conftest import MakeApp, send, settle, started, until
from tests.ui.fakes import SESSION_ID, FakeAgent
from tests.ui.scenarios import (
    BUDGET,
    QUICK,
    QUICK_ANSWER,
    SLOW,
    blocking_agent,
    gate,
    usage,
)
from widgets.app import CairnApp
from widgets.blocks import (
    AssistantReply,
    CompactionReceipt,
    ContextBlock,
    MemoryWriteLine,
    NoticeLine,
    UserMessage,
)
from widgets.memory_panes import MemoryFilePane
from widgets.messages import AgentEvent
from widgets.tool_call import ToolCallCard

SIZE = (120, 40)
TOLD = "remember that our deploy window is Friday 14:00"
ASKED = "when is our deploy window?"
DAILY = "memory/2026-11-30.md"
CHAT = (
    "My sister lives in Tromsø.",
    "The build server is ci-7.internal.",
    "how are you today?",
    "Priya leads the billing migration.",
    "where does my sister live?",
    "tell me about the build server",
)


def painted(widget: Widget) -> str:
    """The text a widget paints on screen, line by line."""
    width, height = widget.region.size
    return "\n".join(strip.text for strip in widget.render_lines(Region(0, 0, width, height)))


def routed(seen: list[Message]) -> list[object]:
    return [m.event for m in seen if isinstance(m, AgentEvent)]


async def test_prompt_shows_user_message_and_streamed_answer(demo_app: MakeApp) -> None:
    seen: list[Message] = []
    app = demo_app()
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await started(app, pilot)
        await send(app, pilot, "hi", typed=True)

        assert app.prompt.value == ""
        users = [u.text for u in app.query(UserMessage)]
        assert users == ["hi"], "the echo and turn_started must show the prompt once"
        (reply,) = app.query(AssistantReply)
        deltas = [e.text for e in routed(seen) if isinstance(e, TextDelta)]
        assert len(deltas) > 1 and "".join(deltas) == reply.source
        assert "offline demo brain" in reply.source
        assert not app.busy


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
        head = git.Repo(workspace).head.commit
        assert f"{DAILY}  +1 line " in line.text and f"→ {head.hexsha[:7]}" in line.text
        git_log = app.side_panes.git_log
        assert git_log.commits[0].short == head.hexsha[:7]
        await pilot.click("#activity-tabs Tab#--content-tab-tab-git")
        await pilot.pause()
        shown = " ".join(painted(git_log.query_one(Static)).split())
        assert f"{head.hexsha[:7]} memory(tool): append 1 line to {DAILY}" in shown


async def test_edits_made_outside_cairn_show_on_the_next_poll(
    demo_app: MakeApp, workspace: Path
) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        pane = app.query_one("#pane-memory", MemoryFilePane)
        assert "curated long-term memory" in pane.text
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


async def test_gate_decisions_appear_in_the_gate_log(demo_app: MakeApp) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        for prompt in (TOLD, ASKED, "/flush"):
            await send(app, pilot, prompt)

        entries = app.side_panes.gate_log.entries
        # one decision before each model call: the told turn's two, the asked turn's two
        assert [e.event.flush for e in entries] == [False, False, False, False]
        first = entries[0]
        assert first.summary.startswith("#1 no · ") and "/2.7k" in first.summary
        conditions = first.query_one(".gate--conditions", Static)
        assert not conditions.display
        await pilot.click(first)
        assert first.expanded and conditions.display
        text = " ".join(painted(conditions).split())
        assert f"✗ tokens = {first.event.projected_tokens} (threshold 2688)" in text
        assert "✓ not_flushed_this_cycle" in text


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


async def test_flush_and_compaction_receipt(demo_app: MakeApp) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        for prompt in (TOLD, ASKED, *CHAT, "/compact", ASKED):
            await send(app, pilot, prompt)

        transcript = app.transcript.describe()
        assert "flush: NO_REPLY — nothing worth saving (cycle 0)" in transcript
        receipt = app.query_one(CompactionReceipt)
        assert receipt.border_title == "compaction #1"
        assert re.search(r"manual: [\d.]+k → [\d.]+k tokens · \d turns summarised", receipt.text)
        summary = receipt.query_one(Collapsible)
        assert summary.collapsed and receipt.summary and "## Decisions" in receipt.summary
        assert "re-injected after compaction: Session Startup, Red Lines" in transcript
        assert app.status_bar.compactions.count == 1


async def test_retry_discards_partial_text(workspace: Path) -> None:
    agent = FakeAgent(workspace)
    agent.turns["hi"] = [
        TurnStarted(SESSION_ID, 1, "hi"),
        TextDelta("half an ans"),
        ModelRetry(1, 4, 1.0, "rate limited", discard_partial=True),
        TextDelta("Hello!"),
        AssistantMessage("Hello!"),
        Error("context_overflow", "context too long, compacting"),
        TurnFinished(1, "completed"),
    ]
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "hi")
        assert [r.source for r in app.query(AssistantReply)] == ["Hello!"]
        notices = {n.text: n for n in app.query(NoticeLine)}
        assert "retrying (1/4) in 1 s: rate limited" in notices
        assert notices["error (context_overflow): context too long, compacting"].has_class("-error")


async def test_escape_cancels_a_slow_turn_cleanly(workspace: Path) -> None:
    agent, _ = blocking_agent(workspace)
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.prompt.value = SLOW
        await pilot.press("enter")
        await until(pilot, lambda: bool(app.query(AssistantReply)))
        assert app.busy and app.prompt.has_class("-busy")

        app.prompt.value = QUICK
        await pilot.press("enter")
        assert list(app.queued) == [QUICK]
        await pilot.press("escape")
        await settle(app, pilot)

        assert not app.busy and not app.queued
        assert agent.closed_streams == 2, "start and the slow turn were both closed"
        notices = [n.text for n in app.query(NoticeLine)]
        assert "turn cancelled" in notices and "dropped 1 queued prompt(s)" in notices
        assert "and done" not in app.transcript.describe()

        await send(app, pilot, QUICK)
        assert app.query(AssistantReply).last().source == QUICK_ANSWER


async def test_a_prompt_sent_during_a_turn_runs_after_it(workspace: Path) -> None:
    agent, release = blocking_agent(workspace)
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.prompt.value = SLOW
        await pilot.press("enter")
        await until(pilot, lambda: app.busy)
        app.prompt.value = QUICK
        await pilot.press("enter")
        assert list(app.queued) == [QUICK]
        release.set()
        await until(pilot, lambda: agent.submitted == [SLOW, QUICK])
        await settle(app, pilot)
        assert app.query(AssistantReply).last().source == QUICK_ANSWER
        assert [u.text for u in app.query(UserMessage)] == [SLOW, QUICK]


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


async def test_keys_clear_toggle_panes_and_cycle_theme(demo_app: MakeApp) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await send(app, pilot, "hi")
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


async def test_narrow_terminal_hides_the_side_panes_until_f2(demo_app: MakeApp) -> None:
    app = demo_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
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
    agent, _ = blocking_agent(workspace)
    ready = asyncio.Event()
    agent.start_script = [ready, *agent.start_script]  # a start that takes its time
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        assert app.busy, "until the agent has started, a prompt waits in the queue"
        await pilot.press(*QUICK)
        await pilot.press("ctrl+j")  # an Enter typed ahead reaches us as "\n" (the tty's ICRNL)
        assert list(app.queued) == [QUICK] and agent.submitted == []
        ready.set()
        await until(pilot, lambda: agent.submitted == [QUICK])
        await settle(app, pilot)
        assert app.query(AssistantReply).last().source == QUICK_ANSWER


async def test_the_status_bar_names_what_is_still_loading(workspace: Path) -> None:
    agent, _ = blocking_agent(workspace)
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


async def test_context_report_is_shown(demo_app: MakeApp) -> None:
    app = demo_app(context_window=2048)
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await send(app, pilot, TOLD)
        await send(app, pilot, "/context")
        text = app.query(ContextBlock).last().text
        window = r"prompt [\d,]+ of 2,048 tokens \(config\) · calibrated by the provider"
        assert re.search(window, text)
        assert "tool schemas: compact (small window)" in text
        assert "bootstrap budget: 1,024 chars a file, 2,048 in all" in text
        assert "MEMORY.md: " in text and "chars in the prompt" in text


async def test_dropped_turns_are_shown(workspace: Path) -> None:
    agent = FakeAgent(workspace)
    agent.turns["go"] = [
        TurnsDropped(
            turns=2, messages=5, tokens_before=2300, tokens_after=1200, window=2048, flushed=True
        ),
    ]
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "go")
        assert (
            "warning: context full: the oldest 2 turns (5 messages) left the context, 2.3k → 1.2k"
            in app.transcript.describe()
        )


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
    agent, _ = blocking_agent(workspace)
    app = CairnApp(agent, after_first_frame=startup.close)
    try:
        assert not gc.isenabled()
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            assert gc.isenabled()
    finally:
        startup.close()

"""Pilot tests of the memory lifecycle on screen: the gate log, the context meter, flush and
compaction receipts, dropped turns, the context report and lifecycle notices."""

from __future__ import annotations

import re
from pathlib import Path

from textual.widgets import Collapsible, Static

from shell.events import (
    BootstrapMissing,
    BootstrapTruncated,
    CompactionFailed,
    CompactionFinished,
    CompactionSkipped,
    CompactionStarted,
    FlushFinished,
    FlushStarted,
    GitLockCleared,
    IndexRebuilt,
    IndexSynced,
    IndexSyncProgress,
    Notice,
    SecretsRedacted,
    StartupPreludeInjected,
    TurnFinished,
    TurnsDropped,
)
from tests.ui.conftest import MakeApp, send, settle, started
from tests.ui.fakes import FakeAgent
from tests.ui.pilot_helpers import ASKED, CHAT, DAILY, SIZE, TOLD, painted
from tests.ui.scenarios import BUDGET, gate, usage
from widgets.app import CairnApp
from widgets.cards.blocks import CompactionReceipt, ContextBlock


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


def bar_start(painted_meter: str) -> int:
    return min(painted_meter.find(cell) for cell in "━─" if cell in painted_meter)


async def test_the_meter_marks_our_own_count_until_the_provider_reported_one(
    workspace: Path,
) -> None:
    agent = FakeAgent(workspace)
    agent.start_script = [usage(1234, calibrated=False)]
    agent.turns = {"hi": [usage(1300)]}
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        meter = app.status_bar.meter
        assert painted(meter).startswith("~1.2k / 8.2k ") and meter.tooltip
        bar = bar_start(painted(meter))

        await send(app, pilot, "hi")

        assert painted(meter).startswith("1.3k / 8.2k ") and meter.tooltip is None
        assert bar_start(painted(meter)) == bar, "the bar starts where it did"


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
        assert "flush: nothing to save (before compaction #1)" in transcript
        receipt = app.query_one(CompactionReceipt)
        assert receipt.border_title == "compaction #1"
        assert re.search(r"manual: [\d.]+k → [\d.]+k tokens · \d turns summarised", receipt.text)
        summary = receipt.query_one(Collapsible)
        assert summary.collapsed and receipt.summary and "## Decisions" in receipt.summary
        assert "re-injected after compaction: Session Startup, Red Lines" in transcript
        assert app.status_bar.compactions.count == 1


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
        IndexRebuilt("missing", scope="project:heron"),
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
            "flush: nothing to save (before compaction #3)",
            "flush: ignored (failure 2): answered without memory_append",
            "flush: exhausted after 3 failures",
            "compaction: skipped: nothing to compact",
            "compaction: failed (overflow) after 2 attempts: summary too long",
            "warning: global memory: index rebuilt from the files: embedder changed",
            "info: project:heron memory: index built from the files",
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

"""Canned conversations for the UI tests and snapshots: deterministic, offline, fast."""

from __future__ import annotations

import asyncio
from pathlib import Path

from shell.context import ContextBudget
from shell.events import (
    AssistantMessage,
    CompactionFinished,
    CompactionStarted,
    ContextReinjected,
    FlushFinished,
    FlushGateEvaluated,
    FlushStarted,
    GateCondition,
    IndexSynced,
    IndexSyncProgress,
    MemoryWritten,
    SearchHit,
    SearchPerformed,
    SessionStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    TurnStarted,
    UsageUpdated,
)
from tests.ui.fakes import SESSION_ID, TODAY, FakeAgent

ASK = "what database do we use?"
REMEMBER = "remember: deploys happen on Fridays"
COMPACT = "/compact"
SLOW = "think slowly"
DAILY = f"memory/{TODAY}.md"
BUDGET = ContextBudget(window=8192)


def usage(tokens: int) -> UsageUpdated:
    return UsageUpdated(
        prompt_tokens=tokens,
        window=BUDGET.window,
        flush_threshold=BUDGET.flush_threshold,
        compaction_threshold=BUDGET.compaction_threshold,
    )


def gate(flush: bool, projected: int) -> FlushGateEvaluated:
    return FlushGateEvaluated(
        flush=flush,
        summary="over the flush threshold" if flush else "below the flush threshold",
        conditions=[
            GateCondition("tokens", flush, projected, BUDGET.flush_threshold, "next prompt"),
            GateCondition("not_flushed_this_cycle", True, None, 0, "not yet flushed in cycle 0"),
        ],
        projected_tokens=projected,
        flush_threshold=BUDGET.flush_threshold,
        compaction_threshold=BUDGET.compaction_threshold,
    )


SEARCH = SearchPerformed(
    query="database",
    mode="hybrid",
    hits=[
        SearchHit(
            "MEMORY.md", 3, 4, 0.82, 0.71, 0.93, "- Database: Postgres 16", "MEMORY.md#L3-L4"
        ),
        SearchHit("memory/2026-04-30.md", 1, 2, 0.41, 0.44, 0.0, "", "memory/2026-04-30.md#L1-L2"),
    ],
    timings_ms={"vector": 3.1, "keyword": 1.2},
    call_id="c1",
)

ANSWER = "We use **Postgres 16** (MEMORY.md#L3-L4)."


def seed_workspace(workspace: Path) -> None:
    (workspace / "memory").mkdir(parents=True, exist_ok=True)
    (workspace / "MEMORY.md").write_text("# Memory\n\n- Database: Postgres 16\n", encoding="utf-8")
    (workspace / "DREAMS.md").write_text("# Dreams\n\nNothing dreamt yet.\n", encoding="utf-8")


def conversation_agent(workspace: Path) -> FakeAgent:
    """A demo session: a recall turn, a memory write, a /compact with a flush, a slow turn."""
    seed_workspace(workspace)
    slow_gate = asyncio.Event()  # never set: the slow turn waits until cancelled
    agent = FakeAgent(workspace)
    daily = workspace / DAILY

    def append_note(line: str, sha: str, message: str) -> None:
        with daily.open("a", encoding="utf-8") as note:
            note.write(line)
        agent.git.commit(sha, message, DAILY)

    agent.start_script = [
        SessionStarted(SESSION_ID, False, "cairn-demo/brain", "~/cairn", demo=True),
        IndexSyncProgress(files_done=1, files_total=2, chunks=3, embedded=3),
        IndexSynced(2, 0, 6, 6, 41.0, "session_start"),
        usage(1234),
    ]
    agent.turns = {
        ASK: [
            TurnStarted(SESSION_ID, 1, ASK),
            gate(False, 1300),
            ToolCallStarted("c1", "memory_search", {"query": "database"}),
            SEARCH,
            ToolCallFinished("c1", "memory_search", '{"hits": 2}', duration_ms=12.0),
            TextDelta("We use "),
            TextDelta("**Postgres 16** "),
            TextDelta("(MEMORY.md#L3-L4)."),
            AssistantMessage(ANSWER),
            usage(1580),
            TurnFinished(1, "completed"),
        ],
        REMEMBER: [
            TurnStarted(SESSION_ID, 2, REMEMBER),
            gate(False, 1700),
            ToolCallStarted(
                "c2", "memory_write", {"path": DAILY, "text": "Deploys happen on Fridays."}
            ),
            lambda: append_note(
                "- Deploys happen on Fridays.\n", "a1b2c3d4e5f6", "memory: daily note"
            ),
            MemoryWritten(DAILY, 30, "a1b2c3d4e5f6", "tool", lines_added=1),
            ToolCallFinished("c2", "memory_write", '{"ok": true}', duration_ms=8.0),
            TextDelta("Noted in today's note."),
            AssistantMessage("Noted in today's note."),
            usage(4500),
            TurnFinished(2, "completed"),
        ],
        COMPACT: [
            gate(True, 5600),
            usage(5600),
            FlushStarted(DAILY, 1, "manual"),
            lambda: append_note("- Team prefers small PRs.\n", "b2c3d4e5f6a7", "memory: flush"),
            MemoryWritten(DAILY, 56, "b2c3d4e5f6a7", "flush", lines_added=1),
            FlushFinished("written", DAILY, 1, lines=1, commit="b2c3d4e5f6a7"),
            CompactionStarted("manual", 5600),
            CompactionFinished(
                trigger="manual",
                tokens_before=5600,
                tokens_after=1900,
                turns_summarised=2,
                messages_kept=4,
                duration_ms=1250.0,
                summary="- The database is Postgres 16.\n- Deploys happen on Fridays.",
                compaction_count=1,
            ),
            ContextReinjected(
                ["Session Startup", "Red Lines"], 96, "## Session Startup\nRead MEMORY.md."
            ),
            usage(1900),
        ],
        SLOW: [
            TurnStarted(SESSION_ID, 3, SLOW),
            TextDelta("Let me think"),
            slow_gate,
            TextDelta(" — never reached."),
            TurnFinished(3, "completed"),
        ],
    }
    return agent

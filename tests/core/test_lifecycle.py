"""A long scripted session on the demo brain with a small window: the whole memory lifecycle.

Dozens of turns with planted facts drive several compactions. Every automatic compaction must
come after a flush in the same cycle, the facts must land in the daily note exactly once, and the
agent must still answer questions about the first turns after the context was compacted.

The demo brain saves a plain statement of fact at its turn; a fact told along with a question
(turns 0 and 21) gets a memory search at its turn instead, so it is the flush that saves it.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest

from shell import events as ev
from shell.agent import Agent
from shell.build import build_agent
from shell.config import Settings

FACTS = {
    0: ("FYI: ticket PROJ-4101 tracks the login bug. Have we seen it before?", "PROJ-4101"),
    7: ("FYI: the staging database runs on db-stage-7:5432.", "db-stage-7:5432"),
    14: ("FYI: error E4012 means the payment token expired.", "E4012"),
    21: ("FYI: ticket PROJ-4377 tracks the export timeout. Is it assigned yet?", "PROJ-4377"),
    28: ("FYI: the release branch is release/2026.12.", "release/2026.12"),
}
CHATTER = [
    "how is the weather in your world today",
    "tell me something about terminal user interfaces",
    "what do you think about plain text files",
    "I am reading about agents this afternoon",
    "let us talk about the design of shells",
    "the coffee machine is broken again",
]
TURNS = 40


async def collect(stream: AsyncIterator[ev.BaseEvent]) -> list[ev.BaseEvent]:
    async with contextlib.aclosing(stream) as events:
        return [event async for event in events]


@pytest.fixture
def settings(demo_settings: Settings) -> Settings:
    return replace(demo_settings, context_window=3_600)


async def long_session(settings: Settings) -> tuple[Agent, list[ev.BaseEvent]]:
    agent = build_agent(settings)
    events = await collect(agent.start())
    for turn in range(TURNS):
        prompt = FACTS[turn][0] if turn in FACTS else f"{CHATTER[turn % len(CHATTER)]} ({turn})"
        events += await collect(agent.submit(prompt))
    return agent, events


def of(events: list[ev.BaseEvent], kind: type[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


async def test_every_compaction_follows_a_flush_and_facts_survive(settings: Settings) -> None:
    agent, events = await long_session(settings)

    receipts = of(events, ev.CompactionFinished)
    assert len(receipts) >= 3
    assert all(r.trigger == "threshold" and r.tokens_after < r.tokens_before for r in receipts)
    assert not of(events, ev.CompactionFailed)
    # No thrash: after each compaction the next gate sees a prompt below the flush threshold.
    for index, event in enumerate(events):
        if isinstance(event, ev.CompactionFinished):
            gate = next(e for e in events[index:] if isinstance(e, ev.FlushGateEvaluated))
            assert not gate.flush and gate.projected_tokens < gate.flush_threshold

    # Flush before compaction, always: walk the events cycle by cycle.
    cycle, flushed_cycles = 0, set()
    for event in events:
        if isinstance(event, ev.FlushFinished) and event.outcome in ("written", "no_reply"):
            flushed_cycles.add(event.cycle)
        elif isinstance(event, ev.CompactionStarted):
            assert cycle in flushed_cycles, f"compaction in cycle {cycle} without a flush first"
        elif isinstance(event, ev.CompactionFinished):
            cycle = event.compaction_count
    assert of(events, ev.FlushFinished)[0].outcome == "written"

    # Gate decisions are visible, mostly "no", each with its numbers.
    gates = of(events, ev.FlushGateEvaluated)
    assert sum(not g.flush for g in gates) > sum(g.flush for g in gates) > 0
    assert all(g.flush_threshold < g.compaction_threshold for g in gates)

    # The flush never fired at the first message.
    first_turn = events[: next(i for i, e in enumerate(events) if isinstance(e, ev.TurnFinished))]
    assert not of(first_turn, ev.FlushStarted)

    # After each compaction the rules from AGENTS.md were re-injected.
    assert len(of(events, ev.ContextReinjected)) == len(receipts)

    # The planted facts are in today's note, once each, and committed.
    note = (settings.workspace / f"memory/{settings.today()}.md").read_text()
    for _, token in FACTS.values():
        assert note.count(token) == 1, token
    lines = [line for line in note.splitlines() if line.strip()]
    assert len(lines) == len(set(lines))
    flush_writes = [e for e in of(events, ev.MemoryWritten) if e.reason == "flush"]
    assert flush_writes
    # a write that added lines is a commit; one whose lines were all there already is not
    assert all(bool(e.commit) == (e.lines_added > 0) for e in flush_writes)

    # The first turn's fact was compacted away long ago, but recall brings it back.
    answer = await collect(agent.submit("which ticket tracks the login bug?"))
    [search] = of(answer, ev.SearchPerformed)
    assert any("memory/" in hit.citation for hit in search.hits)
    reply = " ".join(e.text for e in of(answer, ev.AssistantMessage))
    assert "PROJ-4101" in reply and "Source: memory/" in reply
    await agent.aclose()


async def test_counters_persist_across_a_restart(settings: Settings) -> None:
    agent, _ = await long_session(settings)
    await agent.aclose()
    before = agent.record
    resumed = build_agent(settings, resume=True)
    after = resumed.record
    assert after.session_id == before.session_id
    assert after.compaction_count == before.compaction_count >= 3
    assert after.cycle == before.cycle
    assert resumed.messages == agent.messages
    # the resumed session goes on with the same cycle and does not flush again at once
    events = await collect(resumed.start())
    events += await collect(resumed.submit("hello again"))
    assert not of(events, ev.FlushStarted)
    # the session was compacted before the restart, so its rules come back with it
    assert of(events, ev.ContextReinjected)[0].sections == ["Session Startup", "Red Lines"]
    await resumed.aclose()


async def test_same_day_flushes_add_no_duplicates(settings: Settings) -> None:
    agent = build_agent(settings)
    await collect(agent.start())
    await collect(agent.submit(FACTS[0][0]))
    first = await collect(agent.submit("/flush"))
    second = await collect(agent.submit("/flush"))
    assert of(first, ev.FlushFinished)[0].lines == 1
    assert of(second, ev.FlushFinished)[0].lines == 0
    note = (settings.workspace / f"memory/{settings.today()}.md").read_text()
    assert note.count("PROJ-4101") == 1
    await agent.aclose()

"""`/new` discards the context as a compaction does, so it goes through the flush gate and a
flush attempt first (the demo brain, through real litellm and a real git workspace), or records
why there was none."""

from __future__ import annotations

from pathlib import Path

import pytest

from shell import events as ev
from shell.agent import Agent
from shell.build import build_agent
from shell.config import DEMO_MODEL, Settings
from tests.conftest import Clock
from tests.core.agent_helpers import collect, of

TOLD_WITH_A_QUESTION = "We decided to ship PROJ-1234 on 2026-03-06. When is the design review?"
"""A fact told along with a question: the turn searches memory and saves nothing; only a flush
keeps the decision."""


async def demo_agent(tmp_path: Path) -> Agent:
    settings = Settings(
        workspace=tmp_path / "ws", model=DEMO_MODEL, embedder="hash", watch=False, clock=Clock()
    )
    agent = build_agent(settings, index_in_background=False)
    await collect(agent.start())
    return agent


def note(agent: Agent) -> str:
    return "".join(p.read_text() for p in (agent.workspace / "memory").glob("*.md"))


ONE_SENTENCE = (
    "We decided to ship PROJ-1234 on 2026-03-06, when is the design review?",
    "We decided to ship PROJ-1234 on 2026-03-06",
)
"""The fact and the question in one sentence: the turn's search query holds the fact too."""


@pytest.mark.parametrize("told", [TOLD_WITH_A_QUESTION, ONE_SENTENCE[0]], ids=["two", "one"])
async def test_new_flushes_what_no_turn_saved_before_the_session_starts_over(
    tmp_path: Path, told: str
) -> None:
    agent = await demo_agent(tmp_path)
    for prompt in ("hi", told, "thanks"):
        await collect(agent.submit(prompt))
    assert "PROJ-1234" not in note(agent), "no turn saved it"
    old = agent.session_id

    events = await collect(agent.submit("/new"))

    kinds = [type(e) for e in events]
    order = [ev.FlushGateEvaluated, ev.FlushStarted, ev.FlushFinished, ev.SessionStarted]
    assert [k for k in kinds if k in order] == order
    [gate] = of(events, ev.FlushGateEvaluated)
    assert gate.flush and gate.before == "new_session"
    assert gate.summary.startswith("yes: /new ends the context")
    assert gate.projected_tokens < gate.flush_threshold, "the entry shows the real count"
    assert of(events, ev.FlushStarted)[0].trigger == "new_session"
    [finished] = of(events, ev.FlushFinished)
    assert finished.outcome == "written" and finished.commit
    assert "We decided to ship PROJ-1234 on 2026-03-06" in note(agent)
    assert of(events, ev.SessionStarted)[0].session_id != old and agent.messages == []
    await agent.aclose()


async def test_new_on_an_empty_session_records_why_there_was_no_flush(tmp_path: Path) -> None:
    agent = await demo_agent(tmp_path)

    events = await collect(agent.submit("/new"))

    [gate] = of(events, ev.FlushGateEvaluated)
    assert not gate.flush and gate.before == "new_session"
    assert gate.summary == "no (/new): nothing was said in this session"
    assert not of(events, ev.FlushStarted) and of(events, ev.SessionStarted)
    await agent.aclose()


async def test_new_after_a_flush_in_this_cycle_says_so(tmp_path: Path) -> None:
    agent = await demo_agent(tmp_path)
    await collect(agent.submit(TOLD_WITH_A_QUESTION))
    await collect(agent.submit("/flush"))

    events = await collect(agent.submit("/new"))

    [gate] = of(events, ev.FlushGateEvaluated)
    assert not gate.flush and gate.summary == "no (/new): already flushed before compaction #1"
    assert not of(events, ev.FlushStarted)
    notices = [n.message for n in of(events, ev.Notice)]
    assert notices == [f"New session without a flush: {gate.summary}"]
    await agent.aclose()


@pytest.mark.parametrize("flushed_by", ["/flush", "/compact"])
async def test_what_was_said_after_this_cycle_s_flush_is_flushed_by_new(
    tmp_path: Path, flushed_by: str
) -> None:
    """A flush (or a compaction skipped after its flush) settles the cycle only for what it
    saw: `/new` leaves no summary, so the facts said since are flushed before it."""
    agent = await demo_agent(tmp_path)
    await collect(agent.submit("hi"))
    await collect(agent.submit(flushed_by))
    assert agent.lifecycle.flushed_this_cycle()
    await collect(agent.submit(TOLD_WITH_A_QUESTION))

    events = await collect(agent.submit("/new"))

    [gate] = of(events, ev.FlushGateEvaluated)
    assert gate.flush and gate.before == "new_session"
    assert gate.summary.endswith("1 message since the flush before compaction #1")
    [finished] = of(events, ev.FlushFinished)
    assert finished.outcome == "written"
    assert "We decided to ship PROJ-1234 on 2026-03-06" in note(agent)
    await agent.aclose()


async def test_a_manual_compaction_s_gate_entry_shows_the_real_count(tmp_path: Path) -> None:
    agent = await demo_agent(tmp_path)
    for prompt in ("hi", TOLD_WITH_A_QUESTION):
        await collect(agent.submit(prompt))

    events = await collect(agent.submit("/compact"))

    [gate] = of(events, ev.FlushGateEvaluated)
    assert gate.flush and gate.before == "compaction"
    assert gate.projected_tokens < gate.flush_threshold, "not the threshold it was forced to"
    assert gate.summary.startswith("yes: compaction ends the turns")
    await agent.aclose()

"""The agent's memory lifecycle in a turn: the flush gate before every model call, flushes, and
compaction on context overflow or past the threshold mid-turn."""

from __future__ import annotations

from dataclasses import replace

import pytest

from shell import events as ev
from shell.config import Settings
from tests.core.agent_helpers import collect, of, started, summary_text
from tests.fakes.openai_script import OVERFLOW_DIALECTS, Fault, Reply, overflow
from tests.fakes.openai_server import FakeOpenAI


@pytest.mark.parametrize("dialect", OVERFLOW_DIALECTS)
async def test_context_overflow_flushes_compacts_and_retries_once(
    fake_settings: Settings, fake_openai: FakeOpenAI, dialect: str
) -> None:
    agent = await started(replace(fake_settings, context_window=16_000))
    for i in range(6):
        fake_openai.enqueue(Reply(text=f"answer {i} " + "words " * 150))
        await collect(agent.submit(f"question {i} " + "filler " * 150))
    fake_openai.reset()
    fake_openai.enqueue(
        *overflow(dialect, window=16_000, requested=16_400),
        Reply(text="NO_REPLY"),  # the flush turn has nothing to add
        Reply(text=summary_text("question 5")),
        Reply(text="answered after compaction"),
    )
    events = await collect(agent.submit("question 6, the last one"))
    kinds = [type(e) for e in events]
    assert kinds.index(ev.FlushStarted) < kinds.index(ev.CompactionStarted)
    [flushed] = of(events, ev.FlushFinished)
    assert flushed.outcome == "no_reply"
    [receipt] = of(events, ev.CompactionFinished)
    assert receipt.trigger == "overflow" and receipt.tokens_after < receipt.tokens_before
    assert of(events, ev.ContextReinjected)[0].sections == ["Session Startup", "Red Lines"]
    assert events[-1].reason == "completed"  # type: ignore[attr-defined]
    assert "Red Lines" in fake_openai.requests[-1]["messages"][0]["content"]
    assert agent.record.compaction_count == 1
    await agent.aclose()


async def test_an_overflow_teaches_the_calibration_the_providers_count(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    # every report below is the fake's 42 tokens, not believable for these prompts: the server's
    # words when it refuses a prompt are the first count it gives
    agent = await started(replace(fake_settings, context_window=16_000))
    for i in range(6):
        fake_openai.enqueue(Reply(text=f"answer {i} " + "words " * 150))
        await collect(agent.submit(f"question {i} " + "filler " * 150))
    builder = agent.request_builder
    assert not builder.calibration.calibrated
    requested = 2 * builder.count()
    fake_openai.enqueue(
        *overflow("openai", window=16_000, requested=requested),
        Reply(text="NO_REPLY"),
        Reply(text=summary_text("question 5")),
        Reply(text="answered after compaction"),
    )
    events = await collect(agent.submit("question 6, the last one"))
    assert events[-1].reason == "completed"  # type: ignore[attr-defined]
    [(sent, reported)] = builder.calibration.samples
    assert reported == requested and builder.calibration.project(sent) == requested
    await agent.aclose()


async def test_mid_turn_tool_results_past_both_thresholds_flush_before_compacting(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    settings = replace(fake_settings, context_window=5_000)  # compact tool schemas
    agent = await started(settings)
    for i in range(3):
        fake_openai.enqueue(Reply(text=f"reply {i}"))
        await collect(agent.submit(f"small talk {i}"))
    big = "\n".join(f"line {n}: the quick brown fox jumps over the lazy dog" for n in range(300))
    (settings.workspace / "memory" / "2026-11-01.md").write_text(big)
    # One result takes at most an eighth of the window (`shell.tools.fitting`): six reads of
    # 40 lines each carry the prompt past both thresholds in one round.
    reads = [
        (
            f"c{n}",
            "memory_get",
            f'{{"path": "memory/2026-11-01.md", "from": {1 + 40 * n}, "lines": 40}}',
        )
        for n in range(6)
    ]
    fake_openai.enqueue(
        Reply(tool_calls=reads),
        Reply(tool_calls=[("f1", "memory_append", '{"text": "- read the old note"}')]),  # flush
        Reply(text="NO_REPLY"),
        Reply(text=summary_text("small talk 2")),
        Reply(text="done reading"),
    )
    events = await collect(agent.submit("read the note from november first"))
    kinds = [type(e) for e in events]
    tool_done = next(
        i for i, e in enumerate(events) if isinstance(e, ev.ToolCallFinished) and e.call_id == "c5"
    )
    gate = next(e for e in events[tool_done:] if isinstance(e, ev.FlushGateEvaluated))
    assert gate.flush and gate.projected_tokens >= agent.budget.compaction_threshold
    assert tool_done < kinds.index(ev.FlushStarted) < kinds.index(ev.CompactionStarted)
    [flushed] = of(events, ev.FlushFinished)
    assert flushed.outcome == "written" and flushed.commit
    assert not of(events, ev.TextDelta)[0].text.startswith("NO_REPLY")
    await agent.aclose()


async def test_gate_is_evaluated_before_every_model_call(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(fake_settings)
    fake_openai.enqueue(
        Reply(tool_calls=[("c", "memory_get", '{"path": "MEMORY.md"}')]), Reply(text="ok")
    )
    events = await collect(agent.submit("check"))
    gates = of(events, ev.FlushGateEvaluated)
    assert len(gates) == len(fake_openai.requests) == 2
    assert all(not g.flush and g.summary.startswith("no") for g in gates)
    await agent.aclose()


async def test_three_failed_flushes_exhaust_the_cycle_and_compaction_still_runs(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(replace(fake_settings, max_attempts=1))
    for i in range(3):
        fake_openai.enqueue(Reply(text=f"answer {i}"))
        await collect(agent.submit(f"question {i}"))
    outcomes = []
    for _ in range(3):
        fake_openai.enqueue(Fault(status=500))  # the flush call fails
        events = await collect(agent.flush())
        [finished] = of(events, ev.FlushFinished)
        outcomes.append((finished.outcome, finished.failures))
    assert outcomes == [("failed", 1), ("failed", 2), ("exhausted", 3)]
    assert any("giving up until the next compaction" in n.message for n in of(events, ev.Notice))
    # the cycle counts as flushed now: a compaction goes ahead without another attempt
    fake_openai.enqueue(Reply(text=summary_text("question 2")))
    events = await collect(agent.compact())
    assert not of(events, ev.FlushStarted)
    assert of(events, ev.CompactionStarted)
    await agent.aclose()


async def test_flushes_the_model_ignores_count_toward_the_failure_limit(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(fake_settings)
    outcomes = []
    for _ in range(3):
        fake_openai.enqueue(Reply(text="Happy to help with anything else!"))
        events = await collect(agent.submit("/flush"))
        outcomes += [e.outcome for e in of(events, ev.FlushFinished)]
    assert outcomes == ["ignored", "ignored", "exhausted"]
    assert agent.record.cycle.failures == 3
    assert "without memory_append" in (agent.record.cycle.last_error or "")
    await agent.aclose()


async def test_usage_after_a_failed_flush_says_the_cycle_is_not_flushed(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(replace(fake_settings, max_attempts=1))
    fake_openai.enqueue(Reply(text="answer"))
    await collect(agent.submit("question"))
    fake_openai.enqueue(Fault(status=500))  # the flush call fails: the cycle stays open
    events = await collect(agent.flush())
    assert of(events, ev.FlushFinished)[0].outcome == "failed"
    assert not of(events, ev.UsageUpdated)[-1].cycle_flushed
    for _ in range(2):  # ignored twice more: the cycle gives up, so it is settled
        fake_openai.enqueue(Reply(text="Happy to help!"))
        events = await collect(agent.flush())
    assert of(events, ev.FlushFinished)[0].outcome == "exhausted"
    assert of(events, ev.UsageUpdated)[-1].cycle_flushed
    await agent.aclose()

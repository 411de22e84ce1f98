"""The flush gate at every boundary and window size, and the silent flush turn it starts."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from shell import prompts
from shell.context.budget import ContextBudget
from shell.events import (
    FlushFinished,
    FlushStarted,
    MemoryWritten,
    TextDelta,
    ToolCallFinished,
    from_json,
    to_json,
)
from shell.lifecycle.flush import FlushOutcome, run_flush
from shell.lifecycle.gate import GateInputs, evaluate_flush_gate
from shell.memory.files import MemoryFiles
from shell.memory.git import GitStore
from shell.memory.tools import pinned_append_tool
from shell.model import LLM
from shell.session.record import FlushCycle
from shell.tools import Tool
from tests.fakes.openai_server import FakeOpenAI, Fault, Reply, fake_openai_server

BUDGET = ContextBudget(window=8192)
THRESHOLD = BUDGET.flush_threshold
CONDITION_NAMES = [
    "enabled",
    "tokens",
    "transcript_size",
    "not_flushed_this_cycle",
    "workspace_writable",
    "failures",
]


CYCLE = {"compactions": 2, "flushed_in": 1, "flushed_at": "2026-03-01T10:00:00+00:00"}


def inputs(**changes: object) -> GateInputs:
    """The gate's inputs; the flush cycle's fields (`compactions`, `flushed_in`, `flushed_at`,
    `failures`) may be changed here too."""
    fields = {f.name for f in dataclasses.fields(FlushCycle)}
    cycle = FlushCycle(**{**CYCLE, **{k: v for k, v in changes.items() if k in fields}})  # type: ignore[arg-type]
    base = GateInputs(
        projected_tokens=THRESHOLD,
        cycle=cycle,
        workspace_writable=True,
        transcript_bytes=10_000,
        force_flush_transcript_bytes=2 * 1024 * 1024,
    )
    return dataclasses.replace(base, **{k: v for k, v in changes.items() if k not in fields})


CASES = [
    pytest.param(inputs(), True, "tokens", id="threshold-exactly-met"),
    pytest.param(inputs(projected_tokens=THRESHOLD - 1), False, None, id="one-below-threshold"),
    pytest.param(inputs(projected_tokens=THRESHOLD * 3), True, "tokens", id="far-over"),
    pytest.param(inputs(flushed_in=2), False, None, id="already-flushed-cycle"),
    pytest.param(
        inputs(compactions=0, flushed_in=0, flushed_at=None),
        True,
        "tokens",
        id="both-zero-without-flush-time-legacy-row",
    ),
    pytest.param(
        inputs(compactions=0, flushed_in=0),
        False,
        None,
        id="both-zero-with-flush-time",
    ),
    pytest.param(
        inputs(compactions=0, flushed_in=None, flushed_at=None),
        True,
        "tokens",
        id="never-flushed",
    ),
    pytest.param(inputs(failures=2), True, "tokens", id="two-failures-still-tries"),
    pytest.param(inputs(failures=3), False, None, id="three-failures-exhausted"),
    pytest.param(inputs(workspace_writable=False), False, None, id="read-only-workspace"),
    pytest.param(inputs(enabled=False), False, None, id="disabled"),
    pytest.param(
        inputs(projected_tokens=10, transcript_bytes=2 * 1024 * 1024),
        True,
        "transcript_size",
        id="size-trigger-exactly-met",
    ),
    pytest.param(
        inputs(projected_tokens=10, transcript_bytes=2 * 1024 * 1024 - 1),
        False,
        None,
        id="size-one-byte-below",
    ),
    pytest.param(
        inputs(projected_tokens=10, transcript_bytes=10**9, force_flush_transcript_bytes=0),
        False,
        None,
        id="size-trigger-disabled",
    ),
    pytest.param(
        inputs(transcript_bytes=10**9),
        True,
        "tokens",
        id="both-triggers-tokens-wins",
    ),
    pytest.param(
        inputs(projected_tokens=10, transcript_bytes=10**9, flushed_in=2),
        False,
        None,
        id="size-trigger-but-already-flushed",
    ),
]


@pytest.mark.parametrize(("gate_inputs", "flush", "trigger"), CASES)
def test_gate_decision(gate_inputs: GateInputs, flush: bool, trigger: str | None) -> None:
    decision = evaluate_flush_gate(gate_inputs, BUDGET)
    assert decision.flush is flush
    assert decision.trigger == trigger
    assert decision.summary.startswith("yes: " if flush else "no: ")
    # Every condition is reported, with its numbers, whatever else failed.
    assert [c.name for c in decision.conditions] == CONDITION_NAMES


def test_conditions_carry_values_and_thresholds() -> None:
    gate_inputs = inputs(
        projected_tokens=1204,
        workspace_writable=False,
        failures=3,
        flushed_in=2,
        transcript_bytes=77,
    )
    decision = evaluate_flush_gate(gate_inputs, BUDGET)
    assert not decision.flush
    tokens = decision.condition("tokens")
    assert (tokens.ok, tokens.value, tokens.threshold) == (False, 1204, THRESHOLD)
    assert f"1,204 / {THRESHOLD:,} tokens" in tokens.detail
    size = decision.condition("transcript_size")
    assert (size.ok, size.value, size.threshold) == (False, 77, 2 * 1024 * 1024)
    flushed = decision.condition("not_flushed_this_cycle")
    assert (flushed.ok, flushed.value, flushed.threshold) == (False, 2, 2)
    assert decision.condition("workspace_writable").ok is False
    failures = decision.condition("failures")
    assert (failures.ok, failures.value, failures.threshold) == (False, 3, 3)
    assert "exhausted" in failures.detail


def test_summary_lines_read_like_a_person_wrote_them() -> None:
    no = evaluate_flush_gate(inputs(projected_tokens=1204), BUDGET)
    percent = round(100 * 1204 / THRESHOLD)
    assert no.summary == f"no: 1,204 / {THRESHOLD:,} tokens ({percent}%)"
    yes = evaluate_flush_gate(inputs(projected_tokens=THRESHOLD + 34), BUDGET)
    assert yes.summary == (
        f"yes: {THRESHOLD + 34:,} ≥ {THRESHOLD:,} tokens, not yet flushed in cycle 2"
    )
    exhausted = evaluate_flush_gate(inputs(failures=3), BUDGET)
    assert "failed 3 times" in exhausted.summary


def test_decision_becomes_a_json_round_tripping_event() -> None:
    gate_inputs = inputs(projected_tokens=THRESHOLD + 1)
    decision = evaluate_flush_gate(gate_inputs, BUDGET)
    event = decision.to_event(gate_inputs, BUDGET)
    assert event.flush is True
    assert event.projected_tokens == THRESHOLD + 1
    assert event.flush_threshold == THRESHOLD
    assert event.compaction_threshold == BUDGET.compaction_threshold
    assert [c.name for c in event.conditions] == CONDITION_NAMES
    assert event.conditions == list(decision.conditions)
    assert from_json(to_json(event)) == event
    json.loads(to_json(event))


@pytest.mark.parametrize(
    ("compactions", "flushed_in", "flushed_at", "expected"),
    [
        pytest.param(0, None, None, False, id="never"),
        pytest.param(0, 0, None, False, id="legacy-implicit-zero"),
        pytest.param(0, 0, "2026-03-01T10:00:00", True, id="flushed-in-first-cycle"),
        pytest.param(3, 3, None, True, id="equal-nonzero-needs-no-time"),
        pytest.param(3, 2, "2026-03-01T10:00:00", False, id="flushed-last-cycle"),
    ],
)
def test_a_cycle_knows_whether_it_was_flushed(
    compactions: int, flushed_in: int | None, flushed_at: str | None, expected: bool
) -> None:
    assert FlushCycle(compactions, flushed_in, flushed_at).flushed() is expected


def test_a_cycle_settles_on_a_flush_or_the_last_failure_and_compaction_opens_the_next() -> None:
    cycle = FlushCycle(compactions=1)
    assert not cycle.failed("timeout", "t1", max_failures=2) and not cycle.flushed()
    assert cycle.failed("ignored", "t2", max_failures=2) and cycle.flushed()
    assert (cycle.failures, cycle.last_error, cycle.flushed_at) == (2, "ignored", "t2")
    cycle.compacted()
    assert (cycle.compactions, cycle.failures, cycle.flushed()) == (2, 0, False)
    cycle.succeeded("t3")
    assert cycle.flushed() and (cycle.flushed_in, cycle.failures, cycle.last_error) == (2, 0, None)


@pytest.mark.parametrize(
    "window",
    [
        pytest.param(512, id="minimum-512"),
        pytest.param(4096, id="tiny-4k"),
        pytest.param(8192, id="demo-8k"),
        pytest.param(128_000, id="default-128k"),
        pytest.param(1_000_000, id="huge-1m"),
    ],
)
def test_budget_is_sane_at_every_window(window: int) -> None:
    budget = ContextBudget(window=window)
    assert 0 < budget.flush_threshold < budget.compaction_threshold < budget.window
    assert budget.compaction_threshold >= min(8000, window // 2)  # the prompt keeps room
    assert 0 < budget.keep_tail < budget.flush_threshold  # a compaction lands below the flush
    # The gate fires exactly at the threshold at every size, and not one token before.
    at = inputs(projected_tokens=budget.flush_threshold)
    below = inputs(projected_tokens=budget.flush_threshold - 1)
    assert evaluate_flush_gate(at, budget).flush
    assert not evaluate_flush_gate(below, budget).flush


# --- the flush turn, through real litellm, a real workspace repo and the pinned tool ---------

TARGET = "memory/2026-03-01.md"
NOW = "2026-03-01 09:30 UTC"
CHAT = [
    {"role": "user", "content": "We decided to ship on Friday. The deploy ticket is OPS-4471."},
    {"role": "assistant", "content": "Got it."},
]


@pytest.fixture()
def pinned_tool(tmp_path: Path) -> Tool:
    clock = itertools.count()
    git = GitStore(
        tmp_path, clock=lambda: datetime(2026, 3, 1, 9, 30, next(clock) % 60, tzinfo=UTC)
    )
    git.ensure_repo()
    return pinned_append_tool(MemoryFiles(tmp_path, git), TARGET, origin=lambda: "flush")


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAI]:
    with fake_openai_server() as fake:
        yield fake


@pytest.fixture()
def fake_llm(server: FakeOpenAI) -> LLM:
    server.reset()
    return LLM("openai/fake", api_base=server.base_url, max_attempts=1)


async def flush(llm: LLM, tool: Tool, max_rounds: int = 3) -> list[object]:
    return [
        item
        async for item in run_flush(
            llm=llm,
            messages=list(CHAT),
            system_prompt="You are Cairn.",
            tool=tool,
            target=TARGET,
            cycle=2,
            trigger="tokens",
            now=NOW,
            max_rounds=max_rounds,
        )
    ]


def kinds(items: list[object]) -> list[str]:
    return [type(i).__name__ for i in items]


async def test_demo_brain_flush_writes_and_commits(pinned_tool: Tool, tmp_path: Path) -> None:
    items = await flush(LLM("cairn-demo/brain", max_attempts=1), pinned_tool)
    assert kinds(items) == [
        "FlushStarted",
        "ToolCallStarted",
        "MemoryWritten",
        "ToolCallFinished",
        "FlushFinished",
        "FlushOutcome",
    ]
    started, finished, outcome = items[0], items[-2], items[-1]
    assert isinstance(started, FlushStarted)
    assert (started.target, started.cycle, started.trigger) == (TARGET, 2, "tokens")
    assert isinstance(finished, FlushFinished) and isinstance(outcome, FlushOutcome)
    note = (tmp_path / TARGET).read_text(encoding="utf-8")
    assert "OPS-4471" in note and "Friday" in note
    assert outcome.outcome == finished.outcome == "written"
    assert outcome.lines == finished.lines == note.count("\n") >= 2
    import git

    assert outcome.commit == finished.commit == git.Repo(tmp_path).head.commit.hexsha


async def test_request_shape_and_no_reply(
    server: FakeOpenAI, fake_llm: LLM, pinned_tool: Tool
) -> None:
    server.enqueue(Reply(text="no_reply — nothing new", split=2))
    items = await flush(fake_llm, pinned_tool)
    assert kinds(items) == ["FlushStarted", "FlushFinished", "FlushOutcome"]
    assert items[-1] == FlushOutcome("no_reply", 0, None, None)
    (request,) = server.requests
    assert [t["function"]["name"] for t in request["tools"]] == ["memory_append"]
    system, *chat, last = request["messages"]
    assert system["role"] == "system"
    assert system["content"].startswith("You are Cairn.\n\n" + prompts.FLUSH_MARKER)
    assert chat == CHAT  # the conversation as it was, before any compaction
    assert last == {"role": "user", "content": prompts.flush_prompt(TARGET, NOW)}


async def test_a_model_error_fails_the_flush(
    server: FakeOpenAI, fake_llm: LLM, pinned_tool: Tool
) -> None:
    server.enqueue(Fault(status=401))
    items = await flush(fake_llm, pinned_tool)
    assert kinds(items) == ["FlushStarted", "FlushFinished", "FlushOutcome"]
    outcome = items[-1]
    assert isinstance(outcome, FlushOutcome) and outcome.outcome == "failed"
    assert outcome.error is not None and outcome.error.startswith("auth")
    assert items[-2].error == outcome.error


async def test_every_tool_call_failing_fails_the_flush(
    server: FakeOpenAI, fake_llm: LLM, pinned_tool: Tool, tmp_path: Path
) -> None:
    server.enqueue(
        Reply(
            tool_calls=[
                ("a", "memory_append", '{"text": "- x", "path": "MEMORY.md"}'),
                ("b", "memory_write", '{"path": "MEMORY.md", "text": "gone"}'),
                ("c", "memory_append", '{"text": '),
            ]
        ),
        Reply(text="NO_REPLY"),
    )
    items = await flush(fake_llm, pinned_tool)
    finished = [i for i in items if isinstance(i, ToolCallFinished)]
    assert [f.call_id for f in finished] == ["a", "b", "c"]
    assert all(f.error for f in finished)
    assert "restricted to memory/2026-03-01.md" in finished[0].error
    assert "may only call memory_append" in finished[1].error
    outcome = items[-1]
    assert isinstance(outcome, FlushOutcome) and outcome.outcome == "failed"
    assert not (tmp_path / "MEMORY.md").exists()
    # The model saw its refusals as tool results before answering.
    tool_results = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_results] == ["a", "b", "c"]


async def test_rounds_are_bounded_and_text_is_never_chat(
    server: FakeOpenAI, fake_llm: LLM, pinned_tool: Tool
) -> None:
    server.enqueue(
        *[
            Reply(
                text=f"saving fact {n}",
                tool_calls=[(f"c{n}", "memory_append", f'{{"text": "- fact {n}"}}')],
            )
            for n in range(5)
        ]
    )
    items = await flush(fake_llm, pinned_tool, max_rounds=2)
    assert len(server.requests) == 2
    assert not any(isinstance(i, TextDelta) for i in items)
    written = [i for i in items if isinstance(i, MemoryWritten)]
    assert [w.lines_added for w in written] == [1, 1]
    assert items[-1] == FlushOutcome("written", 2, written[-1].commit, None)
    server.reset()


async def test_cancellation_propagates(
    server: FakeOpenAI, fake_llm: LLM, pinned_tool: Tool
) -> None:
    server.enqueue(Fault(delay_s=5))
    task = asyncio.ensure_future(flush(fake_llm, pinned_tool))
    for _ in range(1000):  # until the request is in flight
        if server.requests:
            break
        await asyncio.sleep(0.01)
    assert server.requests
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_reply_that_ignores_the_flush_is_ignored_not_no_reply(
    server: FakeOpenAI, fake_llm: LLM, pinned_tool: Tool
) -> None:
    server.enqueue(Reply(text="Sure! Your sister lives in Tromsø, I'll keep that in mind."))
    items = await flush(fake_llm, pinned_tool)
    outcome = items[-1]
    assert isinstance(outcome, FlushOutcome) and outcome.outcome == "ignored"
    assert outcome.error is not None and "without memory_append or NO_REPLY" in outcome.error
    assert isinstance(items[-2], FlushFinished) and items[-2].outcome == "ignored"

"""The flush gate at every boundary and window size: its decision, conditions and summary, the
event it becomes, the flush cycle, and the budget it measures against."""

from __future__ import annotations

import dataclasses
import json

import pytest

from shell.context.budget import ContextBudget
from shell.events import from_json, to_json
from shell.lifecycle.gate import Discard, GateInputs, evaluate_flush_gate
from shell.session.record import FlushCycle

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
        f"yes: {THRESHOLD + 34:,} ≥ {THRESHOLD:,} tokens, not yet flushed before compaction #3"
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
    cycle.succeeded("t3", messages=4)
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


def test_a_discard_makes_the_token_condition_hold_for_its_reason_with_the_real_count() -> None:
    why = "compaction ends the turns (1,204 tokens)"
    fresh = inputs(projected_tokens=1204, flushed_in=None, discard=Discard("compaction", why))
    decision = evaluate_flush_gate(fresh, BUDGET)
    assert (
        decision.flush and decision.summary == f"yes: {why}, not yet flushed before compaction #3"
    )
    tokens = decision.condition("tokens")
    assert (tokens.ok, tokens.value, tokens.detail) == (True, 1204, why)
    flushed = dataclasses.replace(fresh, cycle=FlushCycle(**{**CYCLE, "flushed_in": 2}))  # type: ignore[arg-type]
    decision = evaluate_flush_gate(flushed, BUDGET)
    assert decision.summary == "no (compaction): already flushed before compaction #3"

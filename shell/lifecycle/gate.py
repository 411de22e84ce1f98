"""The flush gate: a pure function of its inputs and the one `ContextBudget` that decides, with
reasons, whether the memory flush runs before the next model call.

It reports every condition with its numbers even when another one already fails, so the TUI's
gate log can show exactly why a flush did or did not fire.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from shell.context.budget import ContextBudget
from shell.events import GATE_REQUIRED, FlushGateEvaluated, GateCondition, GateOccasion
from shell.session.record import FlushCycle
from shell.text import byte_size


@dataclass(frozen=True)
class Discard:
    """The context is about to go (a compaction, `/new`): the token condition holds for that
    reason, whatever the numbers say."""

    label: str
    """What discards it, as the summary names it: "compaction" or "/new"."""
    why: str
    """The token condition's line, e.g. "compaction ends the turns (1,204 tokens)"."""
    said_since_flush: int = 0
    """User messages after this cycle's flush: a flush that has not seen them does not settle
    the cycle for this discard."""


@dataclass(frozen=True)
class GateInputs:
    """Everything the flush gate looks at; the agent fills it in before each model call."""

    projected_tokens: int
    """The next prompt as the provider will count it (`RequestBuilder.projected`)."""
    cycle: FlushCycle
    """A copy of the session's flush cycle."""
    workspace_writable: bool
    transcript_bytes: int
    force_flush_transcript_bytes: int
    """0 disables the size trigger."""
    enabled: bool = True
    max_failures: int = 3
    discard: Discard | None = None


@dataclass(frozen=True)
class FlushDecision:
    """The gate's answer, with every condition that led to it."""

    flush: bool
    trigger: Literal["tokens", "transcript_size"] | None
    """What fired it when `flush` is true, else None."""
    summary: str
    """One human line, e.g. "no: 1,204 / 5,376 tokens (22%)"."""
    conditions: tuple[GateCondition, ...]

    def condition(self, name: str) -> GateCondition:
        return next(c for c in self.conditions if c.name == name)

    def to_event(
        self, inputs: GateInputs, budget: ContextBudget, before: GateOccasion = "model_call"
    ) -> FlushGateEvaluated:
        """The decision as the `flush_gate_evaluated` event, asked `before` that."""
        return FlushGateEvaluated(
            flush=self.flush,
            summary=self.summary,
            conditions=list(self.conditions),
            projected_tokens=inputs.projected_tokens,
            flush_threshold=budget.flush_threshold,
            compaction_threshold=budget.compaction_threshold,
            before=before,
        )


def _percent(value: int, whole: int) -> int:
    return round(100 * value / whole) if whole > 0 else 0


def evaluate_flush_gate(inputs: GateInputs, budget: ContextBudget) -> FlushDecision:
    """Decide whether to run a memory flush before the next model call.

    flush = enabled and writable and not already flushed this cycle and not exhausted and
    (projected tokens ≥ flush threshold, or transcript bytes ≥ the force size).

    Args:
        inputs: The session counters and our projection of the next prompt.
        budget: The one context budget; its flush threshold is the token trigger.

    Returns:
        The decision with all six conditions, each with its value and threshold.
    """
    conditions = _conditions(inputs, budget)
    ok: dict[str, bool] = {condition.name: condition.ok for condition in conditions}
    triggered = ok["tokens"] or ok["transcript_size"]
    flush = triggered and all(ok[name] for name in GATE_REQUIRED)
    trigger: Literal["tokens", "transcript_size"] | None = None
    if flush:
        trigger = "tokens" if ok["tokens"] else "transcript_size"
    return FlushDecision(flush, trigger, _summary(inputs, budget, ok, trigger), conditions)


def _tokens_text(inputs: GateInputs, budget: ContextBudget) -> str:
    tokens, threshold = inputs.projected_tokens, budget.flush_threshold
    return f"{tokens:,} / {threshold:,} tokens ({_percent(tokens, threshold)}%)"


def _size_text(inputs: GateInputs) -> str:
    size, force = byte_size(inputs.transcript_bytes), inputs.force_flush_transcript_bytes
    return (
        f"transcript {size} / {byte_size(force)}"
        if force > 0
        else f"transcript {size} (size trigger off)"
    )


def cycle_label(compactions: int) -> str:
    """A flush cycle named by the compaction that ends it, as that compaction's receipt counts:
    the cycle after `compactions` compactions is "before compaction #<compactions + 1>"."""
    return f"before compaction #{compactions + 1}"


def _flushed_text(label: str, flushed: bool, said_since: int) -> str:
    if not flushed:
        return f"not yet flushed {label}"
    if said_since:
        return f"flushed {label}, but {_messages(said_since)} came after it"
    return f"already flushed {label}"


def _messages(count: int) -> str:
    return f"{count} message" + ("" if count == 1 else "s")


def _conditions(inputs: GateInputs, budget: ContextBudget) -> tuple[GateCondition, ...]:
    """The six conditions, each with the numbers it was decided on."""
    cycle = inputs.cycle.compactions
    label = cycle_label(cycle)
    threshold = budget.flush_threshold
    tokens = inputs.projected_tokens
    force = inputs.force_flush_transcript_bytes
    flushed = inputs.cycle.flushed()
    said_since = inputs.discard.said_since_flush if inputs.discard and flushed else 0
    exhausted = inputs.cycle.exhausted(inputs.max_failures)
    return (
        GateCondition(
            "enabled",
            inputs.enabled,
            inputs.enabled,
            True,
            "memory flush is on" if inputs.enabled else "memory flush is off in settings",
        ),
        GateCondition("tokens", True, tokens, threshold, inputs.discard.why)
        if inputs.discard
        else GateCondition(
            "tokens",
            threshold > 0 and tokens >= threshold,
            tokens,
            threshold,
            _tokens_text(inputs, budget)
            if threshold > 0
            else "flush threshold is not positive: never fires",
        ),
        GateCondition(
            "transcript_size",
            force > 0 and inputs.transcript_bytes >= force,
            inputs.transcript_bytes,
            force if force > 0 else None,
            _size_text(inputs),
        ),
        GateCondition(
            "not_flushed_this_cycle",
            not flushed or said_since > 0,
            inputs.cycle.flushed_in,
            cycle,
            _flushed_text(label, flushed, said_since),
        ),
        GateCondition(
            "workspace_writable",
            inputs.workspace_writable,
            inputs.workspace_writable,
            True,
            "workspace is writable" if inputs.workspace_writable else "workspace is read-only",
        ),
        GateCondition(
            "failures",
            not exhausted,
            inputs.cycle.failures,
            inputs.max_failures,
            f"{inputs.cycle.failures} of {inputs.max_failures} failures {label}"
            + ("; exhausted until the next compaction" if exhausted else ""),
        ),
    )


def _summary(
    inputs: GateInputs, budget: ContextBudget, ok: dict[str, bool], trigger: str | None
) -> str:
    """The decision in one line, naming the first reason it went the way it did."""
    cycle = cycle_label(inputs.cycle.compactions)
    if refusal := _refusal(inputs, budget, ok, cycle):
        reason, with_tokens = refusal
        if inputs.discard:
            return f"no ({inputs.discard.label}): {reason}"
        return f"no: {reason}" + (f" ({_tokens_text(inputs, budget)})" if with_tokens else "")
    if inputs.discard and inputs.cycle.flushed():
        since = _messages(inputs.discard.said_since_flush)
        return f"yes: {inputs.discard.why}, {since} since the flush {cycle}"
    if inputs.discard:
        return f"yes: {inputs.discard.why}, not yet flushed {cycle}"
    if trigger == "tokens":
        return (
            f"yes: {inputs.projected_tokens:,} ≥ {budget.flush_threshold:,} tokens, "
            f"not yet flushed {cycle}"
        )
    return (
        f"yes: transcript {byte_size(inputs.transcript_bytes)} ≥ "
        f"{byte_size(inputs.force_flush_transcript_bytes)}, not yet flushed {cycle}"
    )


def _refusal(
    inputs: GateInputs, budget: ContextBudget, ok: dict[str, bool], cycle: str
) -> tuple[str, bool] | None:
    """The first reason not to flush, and whether the token figures go with it; None: flush."""
    if not ok["enabled"]:
        return "memory flush is off", False
    if not (ok["tokens"] or ok["transcript_size"]):
        return _tokens_text(inputs, budget), False
    if not ok["not_flushed_this_cycle"]:
        return f"already flushed {cycle}", True
    if not ok["workspace_writable"]:
        return "workspace is read-only", True
    if not ok["failures"]:
        return (
            f"flush failed {inputs.cycle.failures} times {cycle}; "
            "retrying after the next compaction"
        ), False
    return None

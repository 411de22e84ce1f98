"""The pre-compaction memory flush: a pure gate that decides, with reasons, and the silent turn.

The gate (`evaluate_flush_gate`) is a pure function of its inputs and the one `ContextBudget`,
and reports every condition with its numbers even when another one already fails, so the TUI's
gate log can show exactly why a flush did or did not fire.

The flush turn (`run_flush`) asks the model to store durable facts in today's note through the
pinned `memory_append` tool, before compaction throws the detail away. Its text is never shown as
chat; only its tool calls and memory writes are reported.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from shell import prompts
from shell.calls import ModelCall, ToolDone, run_tool_calls
from shell.context import ContextBudget
from shell.events import (
    Event,
    FlushEnding,
    FlushFinished,
    FlushGateEvaluated,
    FlushStarted,
    FlushTrigger,
    GateCondition,
    MemoryWritten,
)
from shell.session import FlushCycle
from shell.text import shorten
from shell.tools import Tool, Toolbox

if TYPE_CHECKING:
    from shell.llm import LLM

MAX_ERROR_CHARS = 200


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

    def to_event(self, inputs: GateInputs, budget: ContextBudget) -> FlushGateEvaluated:
        """The decision as the `flush_gate_evaluated` event."""
        return FlushGateEvaluated(
            flush=self.flush,
            summary=self.summary,
            conditions=list(self.conditions),
            projected_tokens=inputs.projected_tokens,
            flush_threshold=budget.flush_threshold,
            compaction_threshold=budget.compaction_threshold,
        )


def _percent(value: int, whole: int) -> int:
    return round(100 * value / whole) if whole > 0 else 0


def _size(num_bytes: int) -> str:
    if num_bytes >= 1024 * 1024:
        return f"{num_bytes / (1024 * 1024):.1f} MiB"
    if num_bytes >= 1024:
        return f"{num_bytes / 1024:.1f} KiB"
    return f"{num_bytes} B"


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
    flush = triggered and all(ok[name] for name in _REQUIRED)
    trigger: Literal["tokens", "transcript_size"] | None = None
    if flush:
        trigger = "tokens" if ok["tokens"] else "transcript_size"
    return FlushDecision(flush, trigger, _summary(inputs, budget, ok, trigger), conditions)


_REQUIRED = ("enabled", "not_flushed_this_cycle", "workspace_writable", "failures")
"""Conditions that must all hold; one of "tokens" and "transcript_size" triggers."""


def _tokens_text(inputs: GateInputs, budget: ContextBudget) -> str:
    tokens, threshold = inputs.projected_tokens, budget.flush_threshold
    return f"{tokens:,} / {threshold:,} tokens ({_percent(tokens, threshold)}%)"


def _size_text(inputs: GateInputs) -> str:
    size, force = _size(inputs.transcript_bytes), inputs.force_flush_transcript_bytes
    return (
        f"transcript {size} / {_size(force)}"
        if force > 0
        else f"transcript {size} (size trigger off)"
    )


def _conditions(inputs: GateInputs, budget: ContextBudget) -> tuple[GateCondition, ...]:
    """The six conditions, each with the numbers it was decided on."""
    cycle = inputs.cycle.compactions
    threshold = budget.flush_threshold
    tokens = inputs.projected_tokens
    force = inputs.force_flush_transcript_bytes
    flushed = inputs.cycle.flushed()
    exhausted = inputs.cycle.exhausted(inputs.max_failures)
    return (
        GateCondition(
            "enabled",
            inputs.enabled,
            inputs.enabled,
            True,
            "memory flush is on" if inputs.enabled else "memory flush is off in settings",
        ),
        GateCondition(
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
            not flushed,
            inputs.cycle.flushed_in,
            cycle,
            f"already flushed in cycle {cycle}" if flushed else f"not yet flushed in cycle {cycle}",
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
            f"{inputs.cycle.failures} of {inputs.max_failures} failures in cycle {cycle}"
            + ("; exhausted until the next compaction" if exhausted else ""),
        ),
    )


def _summary(
    inputs: GateInputs, budget: ContextBudget, ok: dict[str, bool], trigger: str | None
) -> str:
    """The decision in one line, naming the first reason it went the way it did."""
    cycle = inputs.cycle.compactions
    tokens_text = _tokens_text(inputs, budget)
    if not ok["enabled"]:
        return "no: memory flush is off"
    if not (ok["tokens"] or ok["transcript_size"]):
        return f"no: {tokens_text}"
    if not ok["not_flushed_this_cycle"]:
        return f"no: already flushed in cycle {cycle} ({tokens_text})"
    if not ok["workspace_writable"]:
        return f"no: workspace is read-only ({tokens_text})"
    if not ok["failures"]:
        return (
            f"no: flush failed {inputs.cycle.failures} times in cycle {cycle}; "
            "retrying after the next compaction"
        )
    if trigger == "tokens":
        return (
            f"yes: {inputs.projected_tokens:,} ≥ {budget.flush_threshold:,} tokens, "
            f"not yet flushed in cycle {cycle}"
        )
    return (
        f"yes: transcript {_size(inputs.transcript_bytes)} ≥ "
        f"{_size(inputs.force_flush_transcript_bytes)}, not yet flushed in cycle {cycle}"
    )


# --- the flush turn --------------------------------------------------------------------------


@dataclass(frozen=True)
class FlushOutcome:
    """The last item `run_flush` yields, so the caller can update the session counters.

    `outcome`: "written" (at least one append succeeded), "no_reply" (the model said NO_REPLY),
    "ignored" (it answered without the tool or the marker; counts as a failure, so a model that
    cannot flush is noticed) or "failed" (a model error, or every tool call failed).
    """

    outcome: FlushEnding
    lines: int = 0
    commit: str | None = None
    error: str | None = None


@dataclass
class _Tally:
    """What the flush turn's calls came to, for its outcome."""

    lines: int = 0
    commit: str | None = None
    succeeded_calls: int = 0
    tool_error: str | None = None
    model_error: str | None = None
    answer: str | None = None
    """The text of a reply without tool calls: NO_REPLY, or chat that ignored the flush."""

    def see(self, event: Event) -> None:
        if isinstance(event, MemoryWritten):
            self.lines += event.lines_added
            self.commit = event.commit or self.commit

    def count(self, done: ToolDone) -> None:
        if done.result.error is None:
            self.succeeded_calls += 1
        else:
            self.tool_error = done.result.error

    def outcome(self) -> FlushOutcome:
        if self.succeeded_calls:
            return FlushOutcome("written", self.lines, self.commit, None)
        if error := self.model_error or self.tool_error:
            return FlushOutcome("failed", 0, None, shorten(error, MAX_ERROR_CHARS))
        if self.answer is not None and prompts.NO_REPLY not in self.answer.upper():
            said = shorten(" ".join(self.answer.split()), 80)
            reason = f"the model answered without memory_append or {prompts.NO_REPLY}: {said!r}"
            return FlushOutcome("ignored", 0, None, reason)
        return FlushOutcome("no_reply", 0, None, None)  # the model chose to store nothing


async def run_flush(
    *,
    llm: LLM,
    messages: list[dict[str, Any]],
    system_prompt: str,
    tool: Tool,
    target: str,
    cycle: int,
    trigger: FlushTrigger,
    now: str,
    max_rounds: int = 3,
    compact_tools: bool = False,
    timer: Callable[[], float] = time.perf_counter,
) -> AsyncIterator[Event | FlushOutcome]:
    """Run one silent flush turn: model → memory_append calls → model, at most `max_rounds`.

    Args:
        llm: The model client (`shell.llm.LLM`).
        messages: The conversation as it is now, before any compaction (no system message).
        system_prompt: The session's system prompt; the flush instructions are appended.
        tool: The pinned, append-only memory tool; the only tool offered.
        target: The workspace-relative note the flush may append to (memory/YYYY-MM-DD.md).
        cycle: The compaction count the flush belongs to.
        trigger: Why it runs: "tokens", "transcript_size" or "manual".
        now: The current time, shown to the model.
        max_rounds: Model calls allowed.
        compact_tools: Send the tool's compact schema (a small window: `RequestBuilder`).
        timer: Monotonic seconds, for the tool calls' durations.

    Yields:
        FlushStarted; tool call and memory events (never TextDelta); FlushFinished; and finally
        a `FlushOutcome` (not an event). Cancellation propagates without FlushFinished.
    """
    from shell.llm import ModelError

    yield FlushStarted(target=target, cycle=cycle, trigger=trigger)
    conversation: list[dict[str, Any]] = [
        {"role": "system", "content": f"{system_prompt}\n\n{prompts.flush_system(target)}"},
        *messages,
        {"role": "user", "content": prompts.flush_prompt(target, now)},
    ]
    toolbox = Toolbox([tool], timer=timer)
    tally = _Tally()
    for _ in range(max(1, max_rounds)):
        call = ModelCall(llm, conversation, toolbox.schemas(compact=compact_tools), silent=True)
        try:
            async for event in call.events():
                yield event
        except ModelError as error:
            tally.model_error = f"{error.kind}: {error.message}"
            break
        if not call.reply.tool_calls:
            tally.answer = call.reply.text
            break
        conversation.append(call.reply.message())
        async for item in run_tool_calls(toolbox, call.reply.tool_calls):
            if isinstance(item, ToolDone):
                conversation.append(item.message())
                tally.count(item)
            else:
                tally.see(item)
                yield item
    outcome = tally.outcome()
    yield FlushFinished(
        outcome=outcome.outcome,
        target=target,
        cycle=cycle,
        lines=outcome.lines,
        commit=outcome.commit,
        error=outcome.error,
    )
    yield outcome

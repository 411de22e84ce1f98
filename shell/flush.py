"""The pre-compaction memory flush: a pure gate that decides, with reasons, and the silent turn.

The gate (`evaluate_flush_gate`) is a pure function of its inputs and the one `ContextBudget`,
and reports every condition with its numbers even when another one already fails, so the TUI's
gate log can show exactly why a flush did or did not fire.

The flush turn (`run_flush`) asks the model to store durable facts in today's note through the
pinned `memory_append` tool, before compaction throws the detail away. Its text is never shown as
chat; only its tool calls and memory writes are reported.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from shell import prompts
from shell.context import ContextBudget
from shell.events import (
    BaseEvent,
    FlushFinished,
    FlushGateEvaluated,
    FlushStarted,
    MemoryWritten,
    TextDelta,
    ToolCallStarted,
)
from shell.text import shorten
from shell.tools import Tool, ToolResult, event_arguments

if TYPE_CHECKING:
    from shell.llm import LLM

MAX_ERROR_CHARS = 200


@dataclass(frozen=True)
class GateInputs:
    """Everything the flush gate looks at; the agent fills it in before each model call."""

    projected_tokens: int
    """Our count of the next prompt: system + tools + messages + the incoming user text."""
    compaction_count: int
    memory_flush_compaction_count: int | None
    """The compaction count when the last flush started; None when never flushed."""
    memory_flush_at: str | None
    """ISO time of the last successful (or exhausted) flush."""
    failures_this_cycle: int
    workspace_writable: bool
    transcript_bytes: int
    force_flush_transcript_bytes: int
    """0 disables the size trigger."""
    enabled: bool = True
    max_failures: int = 3


@dataclass(frozen=True)
class Condition:
    """One gate condition with the numbers it was decided on."""

    name: str
    ok: bool
    value: Any
    threshold: Any
    detail: str


@dataclass(frozen=True)
class FlushDecision:
    """The gate's answer, with every condition that led to it."""

    flush: bool
    trigger: str | None
    """"tokens" or "transcript_size" when `flush` is true, else None."""
    summary: str
    """One human line, e.g. "no: 1,204 / 5,376 tokens (22%)"."""
    conditions: tuple[Condition, ...]

    def condition(self, name: str) -> Condition:
        return next(c for c in self.conditions if c.name == name)

    def to_event(self, inputs: GateInputs, budget: ContextBudget) -> FlushGateEvaluated:
        """The decision as the `flush_gate_evaluated` event."""
        return FlushGateEvaluated(
            flush=self.flush,
            summary=self.summary,
            conditions=[dataclasses.asdict(c) for c in self.conditions],
            projected_tokens=inputs.projected_tokens,
            flush_threshold=budget.flush_threshold,
            compaction_threshold=budget.compaction_threshold,
        )


def already_flushed_this_cycle(
    compaction_count: int, memory_flush_compaction_count: int | None, memory_flush_at: str | None
) -> bool:
    """Whether a flush already ran (or was given up) in the current compaction cycle.

    A flush belongs to the cycle whose compaction count it started in. When both counts are 0,
    the flush time must also be set: a legacy record with an implicit 0 must not suppress the
    very first flush (OpenClaw's fix for rows serialised before the field existed).
    """
    if memory_flush_compaction_count is None:
        return False
    if memory_flush_compaction_count != compaction_count:
        return False
    if compaction_count == 0:
        return memory_flush_at is not None
    return True


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
    cycle = inputs.compaction_count
    threshold = budget.flush_threshold
    tokens = inputs.projected_tokens
    tokens_ok = threshold > 0 and tokens >= threshold
    tokens_text = f"{tokens:,} / {threshold:,} tokens ({_percent(tokens, threshold)}%)"

    force = inputs.force_flush_transcript_bytes
    size_enabled = force > 0
    size_ok = size_enabled and inputs.transcript_bytes >= force
    size_text = (
        f"transcript {_size(inputs.transcript_bytes)} / {_size(force)}"
        if size_enabled
        else f"transcript {_size(inputs.transcript_bytes)} (size trigger off)"
    )

    flushed = already_flushed_this_cycle(
        inputs.compaction_count, inputs.memory_flush_compaction_count, inputs.memory_flush_at
    )
    exhausted = inputs.failures_this_cycle >= inputs.max_failures

    conditions = (
        Condition(
            "enabled",
            inputs.enabled,
            inputs.enabled,
            True,
            "memory flush is on" if inputs.enabled else "memory flush is off in settings",
        ),
        Condition(
            "tokens",
            tokens_ok,
            tokens,
            threshold,
            tokens_text if threshold > 0 else "flush threshold is not positive: never fires",
        ),
        Condition(
            "transcript_size",
            size_ok,
            inputs.transcript_bytes,
            force if size_enabled else None,
            size_text,
        ),
        Condition(
            "not_flushed_this_cycle",
            not flushed,
            inputs.memory_flush_compaction_count,
            cycle,
            f"already flushed in cycle {cycle}" if flushed else f"not yet flushed in cycle {cycle}",
        ),
        Condition(
            "workspace_writable",
            inputs.workspace_writable,
            inputs.workspace_writable,
            True,
            "workspace is writable" if inputs.workspace_writable else "workspace is read-only",
        ),
        Condition(
            "failures",
            not exhausted,
            inputs.failures_this_cycle,
            inputs.max_failures,
            f"{inputs.failures_this_cycle} of {inputs.max_failures} failures in cycle {cycle}"
            + ("; exhausted until the next compaction" if exhausted else ""),
        ),
    )

    triggered = tokens_ok or size_ok
    flush = inputs.enabled and inputs.workspace_writable and not flushed and not exhausted
    flush = flush and triggered
    trigger = ("tokens" if tokens_ok else "transcript_size") if flush else None

    if not inputs.enabled:
        summary = "no: memory flush is off"
    elif not triggered:
        summary = f"no: {tokens_text}"
    elif flushed:
        summary = f"no: already flushed in cycle {cycle} ({tokens_text})"
    elif not inputs.workspace_writable:
        summary = f"no: workspace is read-only ({tokens_text})"
    elif exhausted:
        summary = (
            f"no: flush failed {inputs.failures_this_cycle} times in cycle {cycle}; "
            "retrying after the next compaction"
        )
    elif trigger == "tokens":
        summary = f"yes: {tokens:,} ≥ {threshold:,} tokens, not yet flushed in cycle {cycle}"
    else:
        summary = (
            f"yes: transcript {_size(inputs.transcript_bytes)} ≥ {_size(force)}, "
            f"not yet flushed in cycle {cycle}"
        )
    return FlushDecision(flush, trigger, summary, conditions)


# --- the flush turn --------------------------------------------------------------------------


@dataclass(frozen=True)
class FlushOutcome:
    """The last item `run_flush` yields, so the caller can update the session counters.

    `outcome`: "written" (at least one append succeeded), "no_reply" (the model chose to store
    nothing) or "failed" (a model error, or every tool call failed).
    """

    outcome: str
    lines: int = 0
    commit: str | None = None
    error: str | None = None


def _short(error: str) -> str:
    return shorten(error, MAX_ERROR_CHARS)


async def run_flush(
    *,
    llm: LLM,
    messages: list[dict[str, Any]],
    system_prompt: str,
    tool: Tool,
    target: str,
    cycle: int,
    trigger: str,
    now: str,
    max_rounds: int = 3,
) -> AsyncIterator[BaseEvent | FlushOutcome]:
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

    Yields:
        FlushStarted; tool call and memory events (never TextDelta); FlushFinished; and finally
        a `FlushOutcome` (not an event). Cancellation propagates without FlushFinished.
    """
    from shell.llm import ModelError, ModelReply

    yield FlushStarted(target=target, cycle=cycle, trigger=trigger)
    conversation: list[dict[str, Any]] = [
        {"role": "system", "content": f"{system_prompt}\n\n{prompts.flush_system(target)}"},
        *messages,
        {"role": "user", "content": prompts.flush_prompt(target, now)},
    ]
    schemas = [tool.schema()]
    lines = 0
    commit: str | None = None
    succeeded_calls = 0
    last_tool_error: str | None = None
    model_error: str | None = None

    for _ in range(max(1, max_rounds)):
        reply: ModelReply | None = None
        try:
            async for item in llm.stream(conversation, schemas):
                if isinstance(item, ModelReply):
                    reply = item
                elif isinstance(item, BaseEvent) and not isinstance(item, TextDelta):
                    yield item  # ModelRetry and the like: facts worth seeing
        except ModelError as error:
            model_error = f"{getattr(error, 'kind', 'error')}: {getattr(error, 'message', error)}"
            break
        if reply is None:
            model_error = "the model returned no reply"
            break
        if not reply.tool_calls:
            break
        conversation.append(reply.message())
        for call in reply.tool_calls:
            yield ToolCallStarted(
                call_id=call.id, name=call.name, arguments=event_arguments(call.arguments)
            )
            if call.name == tool.name:
                result = await tool.call(call.arguments)
            else:
                refusal = f"the memory flush may only call {tool.name}, not {call.name!r}"
                result = ToolResult(content=f"Error: {refusal}", error=refusal)
            for event in result.events:
                if isinstance(event, MemoryWritten):
                    lines += event.lines_added
                    commit = event.commit or commit
                yield event
            yield result.finished(call.id, call.name)
            if result.error is None:
                succeeded_calls += 1
            else:
                last_tool_error = result.error
            conversation.append(
                {
                    "role": "tool",
                    "tool_call_id": call.id,
                    "name": call.name,
                    "content": result.content,
                }
            )

    if succeeded_calls:
        outcome = FlushOutcome("written", lines, commit, None)
    elif model_error is not None:
        outcome = FlushOutcome("failed", 0, None, _short(model_error))
    elif last_tool_error is not None:
        outcome = FlushOutcome("failed", 0, None, _short(last_tool_error))
    else:
        # NO_REPLY, or plain text without a write: the model chose to store nothing.
        outcome = FlushOutcome("no_reply", 0, None, None)
    yield FlushFinished(
        outcome=outcome.outcome,
        target=target,
        cycle=cycle,
        lines=outcome.lines,
        commit=outcome.commit,
        error=outcome.error,
    )
    yield outcome

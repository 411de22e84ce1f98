"""The one step before every model call: gate → flush → compaction → re-injection → window fit
→ refusal, ending in the prompt's size, counted once (`CallReady`).

A context overflow the provider reported goes through the same step (`overflow`): a flush
attempt and a compaction first, then the rest as before any call. The prompt is counted once
and again only after something changed it (a compaction, a re-injection, dropped turns); a
flush writes to today's note, which is not in the prompt. Each time, a server that must be asked
for its count (`LLM.count`) is asked too, so the gate, the thresholds and the refusal decide on
its own count of the prompt; elsewhere on the calibrated projection.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from shell.context.request import PromptSize
from shell.events import Event, Notice, TurnsDropped
from shell.lifecycle.gate import evaluate_flush_gate
from shell.lifecycle.manager import MemoryLifecycle
from shell.lifecycle.window_fit import drop_entry, oldest_turns_dropped
from shell.messages import is_summary_message


@dataclass(frozen=True)
class CallReady:
    """How the step ended: the prompt's size (`size` by our count, `projected` as the provider
    will count it), or why no call follows (`cancelled`, or `refused`: over the window)."""

    size: PromptSize
    projected: int
    cancelled: bool = False
    refused: str | None = None
    server_counted: bool = False
    """Whether the server counted this very prompt (`LLM.count`): not asked again after."""

    @property
    def counted(self) -> int:
        return self.size.total


async def prepare_call(
    lifecycle: MemoryLifecycle, *, stop: Callable[[], bool], overflow: str | None = None
) -> AsyncIterator[Event | CallReady]:
    """The events of the step, then one `CallReady`; `stop`: a cancel was requested;
    `overflow`: the provider's message when it refused the last call as too big."""
    builder, budget = lifecycle.request_builder, lifecycle.budget
    if overflow is not None:
        yield Notice(f"The provider reported a context overflow: {overflow}")
        async for event in lifecycle.flush_then_compact("overflow", None):
            yield event
    size, asked = await _measured(lifecycle)
    inputs = lifecycle.gate_inputs(builder.calibration.project(size.total))
    decision = evaluate_flush_gate(inputs, budget)
    yield decision.to_event(inputs, budget)
    if decision.flush:
        async for event in lifecycle.flush(decision.trigger or "tokens"):
            yield event
    if budget.over_compaction(inputs.projected_tokens):
        async for event in lifecycle.flush_then_compact("threshold", None):
            yield event
        size, asked = await _measured(lifecycle)
    if lifecycle.conversation.record.needs_reinjection:
        yield lifecycle.reinject()
        size, asked = await _measured(lifecycle)
    if stop():
        yield CallReady(size, builder.calibration.project(size.total), cancelled=True)
        return
    if dropped := fit_window(lifecycle, builder.calibration.project(size.total)):
        yield dropped
        size, asked = await _measured(lifecycle)
    projected = builder.calibration.project(size.total)
    refused = builder.too_big(projected) if projected >= budget.window else None
    yield CallReady(size, projected, refused=refused, server_counted=asked)


async def _measured(lifecycle: MemoryLifecycle) -> tuple[PromptSize, bool]:
    """Our count of the prompt as it stands, and whether the server counted it too: its count
    anchors the calibration, so the projection of this prompt is the server's count."""
    builder = lifecycle.request_builder
    size = builder.measure()
    reported = await lifecycle.llm.count(builder.request(), builder.tool_schemas)
    builder.calibrate(reported, size.total)
    return size, bool(reported)


def fit_window(lifecycle: MemoryLifecycle, before: int) -> TurnsDropped | None:
    """Never send what our count says exceeds the window: after flush and compaction had their
    chance, drop the oldest whole turns until the prompt (`before` tokens) is back under the
    compaction threshold (or as close as the last turn allows), with a receipt."""
    builder, budget, conversation = (
        lifecycle.request_builder,
        lifecycle.budget,
        lifecycle.conversation,
    )
    if before < budget.window:
        return None
    messages = conversation.messages
    threshold = budget.compaction_threshold
    kept = oldest_turns_dropped(messages, lambda kept: builder.projected(kept) < threshold)
    if len(kept) == len(messages):
        return None
    after = builder.projected(kept)
    conversation.replace(kept, drop_entry(kept))
    conversation.save()
    return TurnsDropped(
        turns=_turns(messages) - _turns(kept),
        messages=len(messages) - len(kept),
        tokens_before=before,
        tokens_after=after,
        window=budget.window,
        flushed=lifecycle.flushed_this_cycle(),
    )


def _turns(messages: list[dict[str, Any]]) -> int:
    return sum(m.get("role") == "user" and not is_summary_message(m) for m in messages)

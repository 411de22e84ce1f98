"""The memory lifecycle of one agent: the flush gate before every model call, the flush, and
compaction strictly after it, with the counters that make "one flush per cycle" hold across
restarts.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from shell.compaction import CompactionResult
from shell.compaction import compact as run_compaction
from shell.events import BaseEvent, ContextReinjected, FlushFinished, Notice
from shell.flush import (
    FlushOutcome,
    GateInputs,
    already_flushed_this_cycle,
    evaluate_flush_gate,
    run_flush,
)
from shell.memory.tools import pinned_append_tool
from shell.reinject import reinjection_block
from shell.session import compaction_entry

if TYPE_CHECKING:
    from shell.agent import Agent

MAX_FLUSH_FAILURES = 3


class MemoryLifecycle:
    def __init__(self, agent: Agent) -> None:
        self.agent = agent

    async def before_model_call(self) -> AsyncIterator[BaseEvent]:
        projected = self.agent.prompt.count(self.agent.messages)
        inputs = self.gate_inputs(projected)
        decision = evaluate_flush_gate(inputs, self.agent.budget)
        yield decision.to_event(inputs, self.agent.budget)
        if decision.flush:
            async for event in self.flush(decision.trigger or "tokens"):
                yield event
        if self.agent.budget.over_compaction(self.agent.prompt.count(self.agent.messages)):
            async for event in self.flush_then_compact("threshold", None):
                yield event
        if self.agent.record.needs_reinjection:
            yield self.reinject()
        yield self.agent.usage()

    def gate_inputs(self, projected: int) -> GateInputs:
        return GateInputs(
            projected_tokens=projected,
            compaction_count=self.agent.record.compaction_count,
            memory_flush_compaction_count=self.agent.record.memory_flush_compaction_count,
            memory_flush_at=self.agent.record.memory_flush_at,
            failures_this_cycle=self.agent.record.flush_failures,
            workspace_writable=_writable(self.agent.workspace),
            transcript_bytes=self.agent.sessions.transcript_bytes(self.agent.session_id),
            force_flush_transcript_bytes=self.agent.settings.force_flush_transcript_bytes,
            max_failures=MAX_FLUSH_FAILURES,
        )

    async def flush_then_compact(self, trigger: str, focus: str | None) -> AsyncIterator[BaseEvent]:
        """Every compaction, whatever its trigger, comes after a flush attempt in its cycle, or
        after a gate decision that says why there was none."""
        if not self.flushed_this_cycle():
            # Force the token condition: we are compacting, so the context is full by definition
            # (on overflow the provider's count is above ours).
            projected = max(
                self.agent.prompt.count(self.agent.messages), self.agent.budget.flush_threshold
            )
            inputs = self.gate_inputs(projected)
            decision = evaluate_flush_gate(inputs, self.agent.budget)
            yield decision.to_event(inputs, self.agent.budget)
            if decision.flush:
                async for event in self.flush("tokens" if trigger == "threshold" else trigger):
                    yield event
            else:
                yield Notice(f"Compacting without a flush this cycle: {decision.summary}")
        async for event in self.compact(trigger, focus):
            yield event

    def flushed_this_cycle(self) -> bool:
        return already_flushed_this_cycle(
            self.agent.record.compaction_count,
            self.agent.record.memory_flush_compaction_count,
            self.agent.record.memory_flush_at,
        )

    async def flush(self, trigger: str) -> AsyncIterator[BaseEvent]:
        target = f"memory/{self.agent.settings.today()}.md"
        cycle = self.agent.record.compaction_count
        tool = pinned_append_tool(self.agent.files, target, origin=self.agent.origin)
        outcome: FlushOutcome | None = None
        async for item in run_flush(
            llm=self.agent.llm,
            messages=list(self.agent.messages),
            system_prompt=self.agent.prompt.system_prompt(),
            tool=tool,
            target=target,
            cycle=cycle,
            trigger=trigger,
            now=self.agent.settings.clock().isoformat(timespec="minutes"),
        ):
            if isinstance(item, FlushOutcome):
                outcome = item
            elif isinstance(item, FlushFinished) and item.outcome == "failed":
                # run_flush knows one attempt; the cycle's count and exhaustion are ours
                failures = self.agent.record.flush_failures + 1
                exhausted = failures >= MAX_FLUSH_FAILURES
                yield replace(
                    item, failures=failures, outcome="exhausted" if exhausted else "failed"
                )
            else:
                yield item
        now = self.agent.settings.clock().isoformat(timespec="seconds")
        if outcome is not None and outcome.outcome in ("written", "no_reply"):
            self.agent.record.memory_flush_compaction_count = cycle
            self.agent.record.memory_flush_at = now
            self.agent.record.flush_failures = 0
            self.agent.record.flush_last_error = None
        else:
            self.agent.record.flush_failures += 1
            self.agent.record.flush_last_error = (
                outcome.error if outcome else "flush did not finish"
            )
            if self.agent.record.flush_failures >= MAX_FLUSH_FAILURES:
                self.agent.record.memory_flush_compaction_count = cycle
                self.agent.record.memory_flush_at = now
                yield Notice(
                    f"Memory flush failed {self.agent.record.flush_failures} times in this cycle "
                    f"({self.agent.record.flush_last_error}); giving up until the next compaction.",
                    level="warning",
                )
        self.agent.save()

    async def compact(self, trigger: str, focus: str | None) -> AsyncIterator[BaseEvent]:
        result: CompactionResult | None = None
        # The tail is sized against the room the messages really have (the system prompt and
        # tool schemas are fixed), so that after compaction the prompt sits well below the flush
        # threshold instead of crossing it again at the next call.
        room = self.agent.budget.flush_threshold - self.agent.prompt.count([])
        keep_tail = min(self.agent.budget.keep_tail, max(0, room // 2))
        if trigger == "overflow":
            # The provider counts more than we do, so our tail size cannot be trusted: keep at
            # most a third of the conversation verbatim.
            keep_tail = min(keep_tail, self.agent.counter.messages(self.agent.messages) // 3)
        async for item in run_compaction(
            llm=self.agent.llm,
            messages=list(self.agent.messages),
            counter=self.agent.counter,
            keep_tail_tokens=keep_tail,
            trigger=trigger,
            focus=focus,
            count_prompt=self.agent.prompt.count,
            compaction_count=self.agent.record.compaction_count,
            max_transcript_tokens=self.agent.budget.window // 2,
        ):
            if isinstance(item, CompactionResult):
                result = item
            else:
                yield item
        if result is None:
            return
        self.agent.messages = list(result.messages)
        self.agent.record.compaction_count += 1
        self.agent.record.flush_failures = 0
        self.agent.record.needs_reinjection = True
        self.agent.sessions.append(self.agent.session_id, compaction_entry(result))
        self.agent.save()

    def reinject(self) -> ContextReinjected:
        agents = self.agent.workspace / "AGENTS.md"
        text = agents.read_text(encoding="utf-8", errors="replace") if agents.is_file() else ""
        now = self.agent.settings.clock().isoformat(timespec="minutes")
        self.agent.prompt.reinjection, sections = reinjection_block(
            text, today=self.agent.settings.today(), now=now
        )
        self.agent.record.needs_reinjection = False
        return ContextReinjected(
            sections=sections,
            chars=len(self.agent.prompt.reinjection),
            text=self.agent.prompt.reinjection,
        )


def _writable(root: Path) -> bool:
    return os.access(root, os.W_OK) and os.access(root / "memory", os.W_OK)

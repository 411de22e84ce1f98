"""The memory lifecycle of one agent: the flush gate before every model call, the flush, and
compaction strictly after it, with the counters that make "one flush per cycle" hold across
restarts.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from shell.context.budget import ContextBudget, ContextWindow
from shell.context.request import RequestBuilder
from shell.events import (
    CompactionTrigger,
    ContextReinjected,
    Event,
    FlushFinished,
    FlushTrigger,
    GateOccasion,
    Notice,
)
from shell.lifecycle.compaction import CompactionResult, compaction_entry
from shell.lifecycle.compaction import compact as run_compaction
from shell.lifecycle.flush import FlushOutcome, flush_request, run_flush
from shell.lifecycle.gate import Discard, GateInputs, evaluate_flush_gate
from shell.lifecycle.reinject import reinjection_block
from shell.lifecycle.rule_flush import flush_by_rule
from shell.lifecycle.window_fit import oldest_turns_dropped, replies_shortened
from shell.memory.files.door import MemoryFiles
from shell.memory.files.scoped import ScopedDoors
from shell.memory.paths import daily_note
from shell.memory.tools import pinned_append_tool
from shell.model import LLM
from shell.model.textcalls import assists, reads_text_calls
from shell.session.conversation import Conversation
from shell.session.record import FlushCycle, SessionRecord
from shell.tools.toolbox import Toolbox

MAX_FLUSH_FAILURES = 3


class MemoryLifecycle:
    """Decides and runs the flush and compaction of one conversation against one budget."""

    def __init__(
        self,
        conversation: Conversation,
        *,
        llm: LLM,
        files: MemoryFiles,
        request_builder: RequestBuilder,
        window: ContextWindow,
        clock: Callable[[], datetime],
        force_flush_transcript_bytes: int,
        timer: Callable[[], float] = time.perf_counter,
        doors: ScopedDoors | None = None,
    ) -> None:
        """
        Args:
            conversation: The live session; compaction replaces its messages, and the flush
                cycle counters live in its record.
            llm: The model, for the flush turn and the summariser.
            files: The memory files; the flush appends to today's note through them.
            request_builder: Counts and projects the whole request, gives the system prompt.
            window: Holds the one context budget.
            clock: Now, timezone-aware: today's note and the flush times.
            force_flush_transcript_bytes: The gate's transcript-size trigger (0: off).
            timer: Monotonic seconds, for the durations of the flush's tool calls and of
                compaction.
            doors: Each scope's memory files, when a project is open: the flush appends to
                the project's note, the lines about the user to the global one
                (`shell.scopes.routing`).
        """
        self.conversation = conversation
        self.llm = llm
        self.files = files
        self.doors = doors
        self.request_builder = request_builder
        self.window = window
        self.clock = clock
        self.force_flush_transcript_bytes = force_flush_transcript_bytes
        self.timer = timer

    @property
    def _record(self) -> SessionRecord:
        return self.conversation.record

    @property
    def _cycle(self) -> FlushCycle:
        return self.conversation.record.cycle

    @property
    def budget(self) -> ContextBudget:
        return self.window.budget

    def gate_inputs(self, projected: int) -> GateInputs:
        return GateInputs(
            projected_tokens=projected,
            cycle=replace(self._cycle),
            workspace_writable=_writable(self.files.root),
            transcript_bytes=self.conversation.transcript_bytes(),
            force_flush_transcript_bytes=self.force_flush_transcript_bytes,
            max_failures=MAX_FLUSH_FAILURES,
        )

    async def flush_then_compact(
        self, trigger: CompactionTrigger, focus: str | None
    ) -> AsyncIterator[Event]:
        """Every compaction, whatever its trigger, comes after a flush attempt in its cycle, or
        after a gate decision that says why there was none."""
        if not self.flushed_this_cycle():
            flush_trigger: FlushTrigger = "tokens" if trigger == "threshold" else trigger
            async for event in self._flush_before_discard("compaction", flush_trigger):
                yield event
        async for event in self.compact(trigger, focus):
            yield event

    async def flush_before_new_session(self) -> AsyncIterator[Event]:
        """`/new` discards the context as a compaction does, so it asks the gate first and
        flushes when it says so; the gate entry (`before="new_session"`) records why not.
        A session where nothing was said has nothing to flush: the entry says that."""
        if not any(m.get("role") == "user" for m in self.conversation.messages):
            inputs = self.gate_inputs(self.request_builder.projected())
            decision = evaluate_flush_gate(inputs, self.budget)
            yield replace(
                decision.to_event(inputs, self.budget, "new_session"),
                flush=False,
                summary="no (/new): nothing was said in this session",
            )
            return
        async for event in self._flush_before_discard("new_session", "new_session"):
            yield event

    async def _flush_before_discard(
        self, before: GateOccasion, trigger: FlushTrigger
    ) -> AsyncIterator[Event]:
        # The token condition holds: the context is about to go, so it counts as full (on
        # overflow the provider's count is above ours anyway).
        counted = self.request_builder.projected()
        discard = _discard(before, counted, self._said_since_flush())
        inputs = replace(self.gate_inputs(counted), discard=discard)
        if before == "compaction" and counted >= self.budget.flush_threshold:
            inputs = replace(inputs, discard=None)  # the numbers say it themselves
        decision = evaluate_flush_gate(inputs, self.budget)
        entry = decision.to_event(inputs, self.budget, before)
        yield entry
        if decision.flush:
            async for event in self.flush(trigger):
                yield event
        elif before == "compaction":
            yield Notice(f"Compacting without a flush this cycle: {entry.summary}")
        else:
            yield Notice(f"New session without a flush: {entry.summary}")

    def flushed_this_cycle(self) -> bool:
        return self._cycle.flushed()

    def _said_since_flush(self) -> int:
        """User messages after the ones this cycle's flush saw (0 when none flushed)."""
        seen = self._cycle.flushed_after
        if not self._cycle.flushed() or seen is None:
            return 0
        return sum(m.get("role") == "user" for m in self.conversation.messages[seen:])

    def _reads_text_calls(self) -> bool:
        settings = self.request_builder.settings
        return reads_text_calls(settings.text_tool_calls, settings.api_base)

    def _assists(self) -> bool:
        """Whether Cairn keeps what the model does not (`memory_assist`): then a flush that
        stored nothing is followed by the flush by rule."""
        settings = self.request_builder.settings
        return assists(settings.memory_assist, settings.api_base)

    async def flush(self, trigger: FlushTrigger) -> AsyncIterator[Event]:
        target = daily_note(self.clock().date())
        cycle = self._cycle.compactions
        tool = pinned_append_tool(self.doors or self.files, target, origin=self.conversation.origin)
        now = self.clock().isoformat(timespec="minutes")
        compact_tools = self.request_builder.compact_tools
        schemas = Toolbox([tool]).schemas(compact=compact_tools)
        system = self.request_builder.system_prompt()
        flushable, counted = await self._flush_fitted(target, now, schemas, system)
        outcome: FlushOutcome | None = None
        async for item in run_flush(
            llm=self.llm,
            messages=flushable,
            system_prompt=system,
            tool=tool,
            target=target,
            cycle=cycle,
            trigger=trigger,
            now=now,
            compact_tools=compact_tools,
            text_calls=self._reads_text_calls(),
            timer=self.timer,
            on_counted=self._flush_counted,
            counted=counted,
        ):
            if isinstance(item, FlushOutcome):
                outcome = item
            else:
                yield item
        outcome = outcome or FlushOutcome("failed", error="flush did not finish")
        if outcome.outcome != "written" and self._assists():
            written = self.doors.own if self.doors else self.files
            said, seen, note = outcome, flushable, written.text(target)
            async for item in flush_by_rule(tool, seen, note, cycle=cycle, timer=self.timer):
                if isinstance(item, FlushOutcome):
                    outcome = replace(item, by_rule=True) if item.outcome != "no_reply" else said
                else:
                    yield item
        gave_up = self._settle(outcome)
        yield FlushFinished(
            outcome="exhausted" if gave_up else outcome.outcome,
            target=target,
            cycle=cycle,
            lines=outcome.lines,
            commit=outcome.commit,
            error=outcome.error,
            failures=self._cycle.failures,
            by_rule=outcome.by_rule,
        )
        if gave_up:
            yield Notice(
                f"Memory flush failed {self._cycle.failures} times in this cycle "
                f"({self._cycle.last_error}); giving up until the next compaction.",
                level="warning",
            )
        self.conversation.save()

    def _settle(self, outcome: FlushOutcome) -> bool:
        """The flush's outcome in the cycle's counters; True when that was its last try."""
        now = self.clock().isoformat(timespec="seconds")
        if outcome.outcome in ("written", "no_reply"):
            self._cycle.succeeded(now, len(self.conversation.messages))
            return False
        error = outcome.error or "flush did not finish"
        return self._cycle.failed(error, now, MAX_FLUSH_FAILURES)

    def _flush_counted(
        self, messages: list[dict[str, Any]], schemas: list[dict[str, Any]], reported: int
    ) -> None:
        """The provider's count of a flush's prompt: the flush's own calibration learns it."""
        counter = self.request_builder.counter
        self.request_builder.flushes.learn(
            counter.messages(messages) + counter.tools(schemas), reported
        )

    async def _flush_fitted(
        self, target: str, now: str, schemas: list[dict[str, Any]], system: str
    ) -> tuple[list[dict[str, Any]], bool]:
        """What the flush sends (`_flushable`), fitted by the server's count of this very prompt
        where the server must be asked (`LLM.count`): a template may count new text unlike the
        last prompt (SmolLM2's escapes every quote). Also whether the server counted what is
        sent, so the call does not ask again."""
        messages = self._flushable(target, now, schemas, system)
        request = flush_request(messages, system, target, now)
        reported = await self.llm.count(request, schemas)
        if not reported:
            return messages, False
        self._flush_counted(request, schemas, reported)
        fitted = self._flushable(target, now, schemas, system)
        return fitted, fitted == messages

    def _flushable(
        self, target: str, now: str, schemas: list[dict[str, Any]], system: str
    ) -> list[dict[str, Any]]:
        """The conversation the flush sees, with room for its reply: all of it; or, when that
        would not fit the window, every user message whole and the replies shortened; or,
        failing that, the newest whole turns that fit. Its prompt is projected by the flush's
        own calibration once the provider has counted one (by the turns' until then)."""
        builder = self.request_builder
        sizes = builder.flushes.calibration
        sizes = sizes if sizes.calibrated else builder.turns.calibration
        tools = builder.counter.tools(schemas)

        def fits(messages: list[dict[str, Any]]) -> bool:
            counted = builder.counter.messages(flush_request(messages, system, target, now))
            return sizes.project(counted + tools) + self.budget.reserve // 2 < self.budget.window

        messages = list(self.conversation.messages)
        if fits(messages):
            return messages
        shortened = replies_shortened(messages)
        return shortened if fits(shortened) else oldest_turns_dropped(shortened, fits)

    async def compact(self, trigger: CompactionTrigger, focus: str | None) -> AsyncIterator[Event]:
        result: CompactionResult | None = None
        # The tail is sized against the room the messages really have (the system prompt and
        # tool schemas are fixed), so that after compaction the prompt sits well below the flush
        # threshold instead of crossing it again at the next call.
        room = self.budget.flush_threshold - self.request_builder.projected([])
        keep_tail = min(self.budget.keep_tail, max(0, room // 2))
        if trigger == "overflow":
            # The provider counts more than we do, so our tail size cannot be trusted: keep at
            # most a third of the conversation verbatim.
            keep_tail = min(
                keep_tail, self.request_builder.counter.messages(self.conversation.messages) // 3
            )
        async for item in run_compaction(
            llm=self.llm,
            messages=list(self.conversation.messages),
            counter=self.request_builder.counter,
            keep_tail_tokens=keep_tail,
            trigger=trigger,
            focus=focus,
            count_prompt=self.request_builder.projected,
            compaction_count=self._cycle.compactions,
            max_transcript_tokens=self.budget.window // 2,
            max_request_tokens=self.budget.compaction_threshold,
            summary_sizes=self.request_builder.summaries,
            clock=self.timer,
        ):
            if isinstance(item, CompactionResult):
                result = item
            else:
                yield item
        if result is None:
            return
        self.conversation.replace(list(result.messages), compaction_entry(result))
        self._cycle.compacted()
        self._record.needs_reinjection = True
        self.conversation.save()

    def reinject(self) -> ContextReinjected:
        agents = self.files.root / "AGENTS.md"
        text = agents.read_text(encoding="utf-8", errors="replace") if agents.is_file() else ""
        now = self.clock().isoformat(timespec="minutes")
        block, sections = reinjection_block(text, today=self.clock().date().isoformat(), now=now)
        self.conversation.reinjection = block
        self._record.needs_reinjection = False
        return ContextReinjected(sections=sections, chars=len(block), text=block)


def _discard(before: GateOccasion, counted: int, said_since_flush: int) -> Discard:
    """Why the token condition holds before a discard, with the real token count. `/new`
    leaves no summary behind, so what was said after this cycle's flush reopens it; a
    compaction keeps its summary and the one flush per cycle."""
    if before == "new_session":
        return Discard("/new", f"/new ends the context ({counted:,} tokens)", said_since_flush)
    return Discard("compaction", f"compaction ends the turns ({counted:,} tokens)")


def _writable(root: Path) -> bool:
    return os.access(root, os.W_OK) and os.access(root / "memory", os.W_OK)

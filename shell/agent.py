"""The agent loop: `Agent.submit(text)` yields every fact of a turn as an event.

One turn is: model call → tool calls → model call … until the model answers without tools. Before
*every* model call the flush gate is evaluated against the one ContextBudget, a flush runs when it
says so, and compaction follows only after that flush was attempted (or skipped with a reason).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from shell import prompts
from shell.compaction import CompactionResult, compact
from shell.config import DEMO_CONTEXT_WINDOW, Settings
from shell.context import ContextBudget, TokenCounter
from shell.events import (
    AssistantMessage,
    BaseEvent,
    ContextReinjected,
    Error,
    Notice,
    SessionStarted,
    StartupPreludeInjected,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    TurnStarted,
    UsageUpdated,
)
from shell.flush import (
    FlushOutcome,
    GateInputs,
    already_flushed_this_cycle,
    evaluate_flush_gate,
    run_flush,
)
from shell.llm import LLM, ModelError, ModelReply
from shell.memory.files import MemoryFiles
from shell.memory.git import GitStore
from shell.memory.service import RecallService
from shell.memory.tools import memory_tools, pinned_append_tool
from shell.reinject import reinjection_block, startup_prelude
from shell.session import SessionRecord, SessionStore
from shell.tools import Toolbox
from shell.workspace import init_workspace, load_bootstrap

UNKNOWN_WINDOW = 128_000
MAX_FLUSH_FAILURES = 3


class Agent:
    """A session with the model: the conversation, its counters, and the memory it writes."""

    def __init__(
        self,
        settings: Settings,
        *,
        llm: LLM,
        git: GitStore,
        files: MemoryFiles,
        sessions: SessionStore,
        record: SessionRecord,
        messages: list[dict[str, Any]],
        recall: RecallService,
        resumed: bool = False,
    ) -> None:
        self.settings = settings
        self.llm = llm
        self.git = git
        self.files = files
        self.sessions = sessions
        self.record = record
        self.messages = messages
        self.recall = recall
        self.counter = TokenCounter()
        self.budget = ContextBudget(
            settings.context_window or DEMO_CONTEXT_WINDOW,
            reserve_cap=settings.reserve_tokens,
            soft_cap=settings.soft_margin_tokens,
            tail_cap=settings.keep_tail_tokens,
            window_source="config" if settings.context_window else "demo",
        )
        self._resumed = resumed
        self._window_resolved = settings.context_window is not None or settings.demo
        self._turn_prelude: str = ""
        self._reinjection: str = ""
        self._last_reported = (0, 0)
        self.toolbox = Toolbox(
            [
                recall.tool(),
                *memory_tools(files, today=settings.today, origin=self._origin),
            ]
        )

    @property
    def session_id(self) -> str:
        return self.record.session_id

    @property
    def workspace(self) -> Path:
        return self.settings.workspace

    # --- public API ---------------------------------------------------------------------

    async def start(self) -> AsyncIterator[BaseEvent]:
        """Announce the session, resolve the context window, and start indexing in the
        background (its events arrive through `background_events` and between turns)."""
        yield SessionStarted(
            session_id=self.session_id,
            resumed=self._resumed,
            model=self.settings.model,
            workspace=str(self.workspace),
            demo=self.settings.demo,
        )
        for event in load_bootstrap(
            self.workspace,
            max_chars=self.settings.bootstrap_max_chars,
            total_max_chars=self.settings.bootstrap_total_max_chars,
        ).events:
            yield event
        if not self._window_resolved:
            window, source = await asyncio.to_thread(self.llm.context_window)
            self._set_window(window or UNKNOWN_WINDOW, source if window else "assumed")
            if not window:
                yield Notice(
                    f"Context window of {self.settings.model} is unknown; assuming "
                    f"{UNKNOWN_WINDOW:,} tokens. Set --context-window to be exact.",
                    level="warning",
                )
        self.recall.start()
        yield self._usage()

    async def submit(self, text: str) -> AsyncIterator[BaseEvent]:
        """A user prompt, or a slash command: /compact [focus], /flush, /new."""
        command, _, argument = text.strip().partition(" ")
        match command:
            case "/compact":
                stream = self.compact(argument.strip() or None)
            case "/flush":
                stream = self.flush()
            case "/new":
                stream = self.new_session()
            case _:
                stream = self.run_turn(text)
        async with contextlib.aclosing(stream) as events:
            async for event in events:
                yield event

    async def run_turn(self, prompt: str) -> AsyncIterator[BaseEvent]:
        self.record.turns += 1
        turn = self.record.turns
        yield TurnStarted(session_id=self.session_id, turn=turn, prompt=prompt)
        for event in self.recall.drain():
            yield event
        if self.record.needs_prelude:
            self._turn_prelude, files = startup_prelude(
                self.workspace, today=self.settings.clock().date()
            )
            self.record.needs_prelude = False
            if files:
                yield StartupPreludeInjected(files=files, chars=len(self._turn_prelude))
        self._append({"role": "user", "content": prompt})
        reason = "completed"
        overflow_retried = False
        rounds = 0
        try:
            while True:
                async for event in self._before_model_call():
                    yield event
                reply: ModelReply | None = None
                try:
                    async for item in self.llm.stream(self._request(), self.toolbox.schemas()):
                        if isinstance(item, ModelReply):
                            reply = item
                        else:
                            yield item
                except ModelError as error:
                    if error.kind == "context_overflow" and not overflow_retried:
                        overflow_retried = True
                        yield Notice(f"The provider reported a context overflow: {error.message}")
                        async for event in self._flush_then_compact("overflow", None):
                            yield event
                        continue
                    yield Error(kind=error.kind, message=error.message)
                    reason = "error"
                    return
                assert reply is not None
                self._last_reported = (reply.prompt_tokens, reply.completion_tokens)
                self.record.prompt_tokens_total += reply.prompt_tokens
                self.record.completion_tokens_total += reply.completion_tokens
                self._append(_assistant_message(reply))
                if reply.text:
                    yield AssistantMessage(text=reply.text)
                if not reply.tool_calls:
                    yield self._usage()
                    return
                for call in reply.tool_calls:
                    yield ToolCallStarted(
                        call_id=call.id, name=call.name, arguments=_loads(call.arguments)
                    )
                    result = await self.toolbox.call(call.name, call.arguments)
                    for event in (*self.recall.drain(), *result.events):
                        yield event
                    yield ToolCallFinished(
                        call_id=call.id,
                        name=call.name,
                        result=result.content,
                        error=result.error,
                        duration_ms=round(result.duration_ms, 1),
                    )
                    self._append(
                        {"role": "tool", "tool_call_id": call.id, "content": result.content}
                    )
                rounds += 1
                if rounds >= self.settings.max_tool_rounds:
                    yield Notice(
                        f"Stopped after {rounds} tool rounds in one turn.", level="warning"
                    )
                    reason = "tool_limit"
                    return
        except (asyncio.CancelledError, GeneratorExit):
            reason = "cancelled"
            raise
        finally:
            self._close_open_tool_calls()
            self._turn_prelude = ""
            self._save()
            if reason != "cancelled":
                for event in self.recall.drain():
                    yield event
                yield TurnFinished(turn=turn, reason=reason)

    async def compact(self, focus: str | None = None) -> AsyncIterator[BaseEvent]:
        """Manual /compact: flush first if this cycle has not been flushed, then compact."""
        async for event in self._flush_then_compact("manual", focus):
            yield event
        yield self._usage()

    async def flush(self) -> AsyncIterator[BaseEvent]:
        async for event in self._flush("manual"):
            yield event
        yield self._usage()

    async def new_session(self) -> AsyncIterator[BaseEvent]:
        self._save()
        self.record = self.sessions.create(self.settings.model, prelude=True)
        self.messages = []
        self._reinjection = ""
        self._resumed = False
        yield SessionStarted(
            session_id=self.session_id,
            resumed=False,
            model=self.settings.model,
            workspace=str(self.workspace),
            demo=self.settings.demo,
        )
        yield self._usage()

    async def background_events(self) -> AsyncIterator[BaseEvent]:
        """Events that happen between turns (index sync, file watching), for the TUI."""
        async for event in self.recall.events():
            yield event

    async def aclose(self) -> None:
        self._save()
        await self.recall.aclose()

    # --- the memory lifecycle -----------------------------------------------------------

    async def _before_model_call(self) -> AsyncIterator[BaseEvent]:
        projected = self._count(self.messages)
        inputs = self._gate_inputs(projected)
        decision = evaluate_flush_gate(inputs, self.budget)
        yield decision.to_event(inputs, self.budget)
        if decision.flush:
            async for event in self._flush(decision.trigger or "tokens"):
                yield event
        if self.budget.over_compaction(self._count(self.messages)):
            async for event in self._flush_then_compact("threshold", None):
                yield event
        if self.record.needs_reinjection:
            yield self._reinject()
        yield self._usage()

    def _gate_inputs(self, projected: int) -> GateInputs:
        return GateInputs(
            projected_tokens=projected,
            compaction_count=self.record.compaction_count,
            memory_flush_compaction_count=self.record.memory_flush_compaction_count,
            memory_flush_at=self.record.memory_flush_at,
            failures_this_cycle=self.record.flush_failures,
            workspace_writable=_writable(self.workspace),
            transcript_bytes=self.sessions.transcript_bytes(self.session_id),
            force_flush_transcript_bytes=self.settings.force_flush_transcript_bytes,
            max_failures=MAX_FLUSH_FAILURES,
        )

    async def _flush_then_compact(
        self, trigger: str, focus: str | None
    ) -> AsyncIterator[BaseEvent]:
        """Every compaction, whatever its trigger, comes after a flush attempt in its cycle, or
        after a gate decision that says why there was none."""
        if not self._flushed_this_cycle():
            # Force the token condition: we are compacting, so the context is full by definition
            # (on overflow the provider's count is above ours).
            projected = max(self._count(self.messages), self.budget.flush_threshold)
            inputs = self._gate_inputs(projected)
            decision = evaluate_flush_gate(inputs, self.budget)
            yield decision.to_event(inputs, self.budget)
            if decision.flush:
                async for event in self._flush("tokens" if trigger == "threshold" else trigger):
                    yield event
            else:
                yield Notice(f"Compacting without a flush this cycle: {decision.summary}")
        async for event in self._compact(trigger, focus):
            yield event

    def _flushed_this_cycle(self) -> bool:
        return already_flushed_this_cycle(
            self.record.compaction_count,
            self.record.memory_flush_compaction_count,
            self.record.memory_flush_at,
        )

    async def _flush(self, trigger: str) -> AsyncIterator[BaseEvent]:
        target = f"memory/{self.settings.today()}.md"
        cycle = self.record.compaction_count
        tool = pinned_append_tool(self.files, target, origin=self._origin)
        outcome: FlushOutcome | None = None
        async for item in run_flush(
            llm=self.llm,
            messages=list(self.messages),
            system_prompt=self._system_prompt(),
            tool=tool,
            target=target,
            cycle=cycle,
            trigger=trigger,
            now=self.settings.clock().isoformat(timespec="minutes"),
        ):
            if isinstance(item, FlushOutcome):
                outcome = item
            else:
                yield item
        now = self.settings.clock().isoformat(timespec="seconds")
        if outcome is not None and outcome.outcome in ("written", "no_reply"):
            self.record.memory_flush_compaction_count = cycle
            self.record.memory_flush_at = now
            self.record.flush_failures = 0
            self.record.flush_last_error = None
        else:
            self.record.flush_failures += 1
            self.record.flush_last_error = outcome.error if outcome else "flush did not finish"
            if self.record.flush_failures >= MAX_FLUSH_FAILURES:
                self.record.memory_flush_compaction_count = cycle
                self.record.memory_flush_at = now
                yield Notice(
                    f"Memory flush failed {self.record.flush_failures} times in this cycle "
                    f"({self.record.flush_last_error}); giving up until the next compaction.",
                    level="warning",
                )
        self._save()

    async def _compact(self, trigger: str, focus: str | None) -> AsyncIterator[BaseEvent]:
        result: CompactionResult | None = None
        # The tail is sized against the room the messages really have (the system prompt and
        # tool schemas are fixed), so that after compaction the prompt sits well below the flush
        # threshold instead of crossing it again at the next call.
        room = self.budget.flush_threshold - self._count([])
        keep_tail = min(self.budget.keep_tail, max(0, room // 2))
        if trigger == "overflow":
            # The provider counts more than we do, so our tail size cannot be trusted: keep at
            # most a third of the conversation verbatim.
            keep_tail = min(keep_tail, self.counter.messages(self.messages) // 3)
        async for item in compact(
            llm=self.llm,
            messages=list(self.messages),
            counter=self.counter,
            keep_tail_tokens=keep_tail,
            trigger=trigger,
            focus=focus,
            count_prompt=self._count,
            compaction_count=self.record.compaction_count,
            max_transcript_tokens=self.budget.window // 2,
        ):
            if isinstance(item, CompactionResult):
                result = item
            else:
                yield item
        if result is None:
            return
        kept = len(result.messages) - 1
        self.messages = list(result.messages)
        self.record.compaction_count += 1
        self.record.flush_failures = 0
        self.record.needs_reinjection = True
        self.sessions.append(
            self.session_id,
            {
                "kind": "compaction",
                "summary": result.summary,
                "kept": kept,
                "tokens_before": result.tokens_before,
                "tokens_after": result.tokens_after,
            },
        )
        self._save()

    def _reinject(self) -> ContextReinjected:
        agents = self.workspace / "AGENTS.md"
        text = agents.read_text(encoding="utf-8", errors="replace") if agents.is_file() else ""
        now = self.settings.clock().isoformat(timespec="minutes")
        self._reinjection, sections = reinjection_block(text, today=self.settings.today(), now=now)
        self.record.needs_reinjection = False
        return ContextReinjected(
            sections=sections, chars=len(self._reinjection), text=self._reinjection
        )

    # --- prompt assembly and accounting -------------------------------------------------

    def _system_prompt(self) -> str:
        bootstrap = load_bootstrap(
            self.workspace,
            max_chars=self.settings.bootstrap_max_chars,
            total_max_chars=self.settings.bootstrap_total_max_chars,
        )
        parts = [
            prompts.CAIRN_IDENTITY,
            prompts.MEMORY_RECALL,
            f"Current date: {self.settings.today()}",
            f"# Project Context\n\n{bootstrap.text}",
        ]
        if self._reinjection:
            parts.append(self._reinjection)
        if self._turn_prelude:
            parts.append(self._turn_prelude)
        return "\n\n".join(parts)

    def _request(self, messages: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        system = {"role": "system", "content": self._system_prompt()}
        return [system, *(self.messages if messages is None else messages)]

    def _count(self, messages: list[dict[str, Any]]) -> int:
        return self.counter.messages(self._request(messages)) + self.counter.tools(
            self.toolbox.schemas()
        )

    def _usage(self) -> UsageUpdated:
        system = self.counter.message({"role": "system", "content": self._system_prompt()})
        tools = self.counter.tools(self.toolbox.schemas())
        conversation = self.counter.messages(self.messages)
        reported, completion = self._last_reported
        return UsageUpdated(
            prompt_tokens=system + tools + conversation,
            window=self.budget.window,
            flush_threshold=self.budget.flush_threshold,
            compaction_threshold=self.budget.compaction_threshold,
            breakdown={"system": system, "tools": tools, "messages": conversation},
            reported_prompt_tokens=reported,
            completion_tokens=completion,
            window_source=self.budget.window_source,
        )

    def _set_window(self, window: int, source: str) -> None:
        self.budget = ContextBudget(
            window,
            reserve_cap=self.settings.reserve_tokens,
            soft_cap=self.settings.soft_margin_tokens,
            tail_cap=self.settings.keep_tail_tokens,
            window_source=source,
        )
        self._window_resolved = True

    def _append(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        self.sessions.append(self.session_id, {"kind": "message", "message": message})

    def _close_open_tool_calls(self) -> None:
        """After a cancel mid-tools, answer every unanswered tool call so the transcript stays
        valid for the next request."""
        for index in range(len(self.messages) - 1, -1, -1):
            message = self.messages[index]
            if message["role"] == "assistant" and message.get("tool_calls"):
                answered = {m.get("tool_call_id") for m in self.messages[index + 1 :]}
                for call in message["tool_calls"]:
                    if call["id"] not in answered:
                        self._append(
                            {
                                "role": "tool",
                                "tool_call_id": call["id"],
                                "content": "Cancelled by the user.",
                            }
                        )
                return
            if message["role"] == "user":
                return

    def _origin(self) -> str:
        return f"session {self.session_id} turn {self.record.turns}"

    def _save(self) -> None:
        self.record.last_prompt_tokens = self._count(self.messages)
        self.sessions.save(self.record)


def _assistant_message(reply: ModelReply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in reply.tool_calls
        ]
    return message


def _loads(arguments: str) -> dict[str, Any]:
    import json

    try:
        value = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return {"_raw": arguments}
    return value if isinstance(value, dict) else {"_raw": arguments}


def _writable(root: Path) -> bool:
    import os

    return os.access(root, os.W_OK) and os.access(root / "memory", os.W_OK)


def build_agent(
    settings: Settings, *, session_id: str | None = None, resume: bool = False
) -> Agent:
    """The composition root shared by the TUI, `cairn run`, tests and benchmarks."""
    git = init_workspace(settings)
    files = MemoryFiles(settings.workspace, git)
    sessions = SessionStore(settings.state_dir, settings.clock)
    record: SessionRecord | None = None
    if session_id:
        record = sessions.load(session_id)
    elif resume:
        record = sessions.latest()
    resumed = record is not None
    if record is None:
        record = sessions.create(settings.model, prelude=True)
    messages = sessions.messages(record.session_id) if resumed else []
    llm = LLM(
        settings.model,
        api_base=settings.api_base,
        api_key=settings.api_key,
        max_attempts=settings.max_attempts,
        base_delay=settings.retry_base_delay,
        timeout=settings.request_timeout,
    )
    recall = RecallService(settings)
    return Agent(
        settings,
        llm=llm,
        git=git,
        files=files,
        sessions=sessions,
        record=record,
        messages=messages,
        recall=recall,
        resumed=resumed,
    )

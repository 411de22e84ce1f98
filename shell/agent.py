"""The agent loop: `Agent.submit(text)` yields every fact of a turn as an event.

One turn is: model call → tool calls → model call … until the model answers without tools. Before
*every* model call the flush gate is evaluated against the one ContextBudget, a flush runs when it
says so, and compaction follows only after that flush was attempted (or skipped with a reason).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from pathlib import Path
from typing import Any

from shell.config import DEMO_CONTEXT_WINDOW, Settings
from shell.context import ContextBudget, TokenCounter
from shell.events import (
    AssistantMessage,
    BaseEvent,
    Error,
    Notice,
    SessionStarted,
    StartupPreludeInjected,
    ToolCallStarted,
    TurnFinished,
    TurnStarted,
    UsageUpdated,
)
from shell.lifecycle import MemoryLifecycle
from shell.llm import LLM, ModelError, ModelReply
from shell.memory.files import MemoryFiles
from shell.memory.git import GitStore
from shell.memory.service import RecallService
from shell.memory.tools import memory_tools
from shell.reinject import startup_prelude
from shell.request import RequestBuilder
from shell.session import SessionRecord, SessionStore
from shell.tools import Toolbox, event_arguments

UNKNOWN_WINDOW = 128_000


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
        self.budget = _budget(
            settings,
            settings.context_window or DEMO_CONTEXT_WINDOW,
            "config" if settings.context_window else "demo",
        )
        self._resumed = resumed
        self._window_resolved = settings.context_window is not None or settings.demo
        self._last_reported = (0, 0)
        self.toolbox = Toolbox(
            [
                recall.tool(),
                *memory_tools(files, today=settings.today, origin=self.origin),
            ]
        )
        self.prompt = RequestBuilder(settings, self.counter, self.toolbox.schemas())
        self.lifecycle = MemoryLifecycle(self)

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
        for event in self.prompt.bootstrap().events:
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
        yield self.usage()

    async def submit(self, text: str) -> AsyncGenerator[BaseEvent]:
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

    async def run_turn(self, prompt: str) -> AsyncGenerator[BaseEvent]:
        self.record.turns += 1
        turn = self.record.turns
        yield TurnStarted(session_id=self.session_id, turn=turn, prompt=prompt)
        for event in self.recall.drain():
            yield event
        if self.record.needs_prelude:
            self.prompt.prelude, files = startup_prelude(
                self.workspace, today=self.settings.clock().date()
            )
            self.record.needs_prelude = False
            if files:
                yield StartupPreludeInjected(files=files, chars=len(self.prompt.prelude))
        self._append({"role": "user", "content": prompt})
        reason = "completed"
        overflow_retried = False
        rounds = 0
        try:
            while True:
                async for event in self.lifecycle.before_model_call():
                    yield event
                reply: ModelReply | None = None
                try:
                    async for item in self.llm.stream(
                        self.prompt.request(self.messages), self.toolbox.schemas()
                    ):
                        if isinstance(item, ModelReply):
                            reply = item
                        else:
                            yield item
                except ModelError as error:
                    if error.kind == "context_overflow" and not overflow_retried:
                        overflow_retried = True
                        yield Notice(f"The provider reported a context overflow: {error.message}")
                        async for event in self.lifecycle.flush_then_compact("overflow", None):
                            yield event
                        continue
                    yield Error(kind=error.kind, message=error.message)
                    reason = "error"
                    return
                assert reply is not None
                self._last_reported = (reply.prompt_tokens, reply.completion_tokens)
                self.record.prompt_tokens_total += reply.prompt_tokens
                self.record.completion_tokens_total += reply.completion_tokens
                self._append(reply.message())
                if reply.text:
                    yield AssistantMessage(text=reply.text)
                if not reply.tool_calls:
                    yield self.usage()
                    return
                for call in reply.tool_calls:
                    yield ToolCallStarted(
                        call_id=call.id, name=call.name, arguments=event_arguments(call.arguments)
                    )
                    result = await self.toolbox.call(call.name, call.arguments)
                    for event in (*self.recall.drain(), *result.events):
                        yield event
                    yield result.finished(call.id, call.name)
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
            self.prompt.prelude = ""
            self.save()
            if reason != "cancelled":
                for event in self.recall.drain():
                    yield event
                yield TurnFinished(turn=turn, reason=reason)

    async def compact(self, focus: str | None = None) -> AsyncGenerator[BaseEvent]:
        """Manual /compact: flush first if this cycle has not been flushed, then compact."""
        async for event in self.lifecycle.flush_then_compact("manual", focus):
            yield event
        yield self.usage()

    async def flush(self) -> AsyncGenerator[BaseEvent]:
        async for event in self.lifecycle.flush("manual"):
            yield event
        yield self.usage()

    async def new_session(self) -> AsyncGenerator[BaseEvent]:
        self.save()
        self.record = self.sessions.create(self.settings.model, prelude=True)
        self.messages = []
        self.prompt.reinjection = ""
        self._resumed = False
        yield SessionStarted(
            session_id=self.session_id,
            resumed=False,
            model=self.settings.model,
            workspace=str(self.workspace),
            demo=self.settings.demo,
        )
        yield self.usage()

    async def background_events(self) -> AsyncIterator[BaseEvent]:
        """Events that happen between turns (index sync, file watching), for the TUI."""
        async for event in self.recall.events():
            yield event

    async def aclose(self) -> None:
        self.save()
        await self.recall.aclose()

    # --- bookkeeping ----------------------------------------------------------------------

    def usage(self) -> UsageUpdated:
        return self.prompt.usage(self.messages, self.budget, self._last_reported)

    def _set_window(self, window: int, source: str) -> None:
        self.budget = _budget(self.settings, window, source)
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

    def origin(self) -> str:
        return f"session {self.session_id} turn {self.record.turns}"

    def save(self) -> None:
        self.record.last_prompt_tokens = self.prompt.count(self.messages)
        self.sessions.save(self.record)


def _budget(settings: Settings, window: int, source: str) -> ContextBudget:
    return ContextBudget(
        window,
        reserve_cap=settings.reserve_tokens,
        soft_cap=settings.soft_margin_tokens,
        tail_cap=settings.keep_tail_tokens,
        window_source=source,
    )

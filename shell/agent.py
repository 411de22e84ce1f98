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

from shell import commands
from shell.config import Settings
from shell.context.budget import ContextBudget, ContextWindow
from shell.context.request import RequestBuilder
from shell.dreaming import Decision, Dreamer, Preview
from shell.events import (
    ApprovalChoice,
    AssistantMessage,
    DreamTrigger,
    Error,
    Event,
    Loading,
    Notice,
    ProposalsWaiting,
    SessionStarted,
    StartupPreludeInjected,
    Take,
    TurnFinished,
    TurnStarted,
    UsageUpdated,
)
from shell.git.history import MemoryHistory, RevertPreview, revert_events
from shell.git.store import GitStore
from shell.lifecycle.manager import MemoryLifecycle
from shell.lifecycle.reinject import startup_prelude
from shell.loop.calls import ModelCall, ToolDone, run_tool_calls
from shell.loop.cancel import Cancellation, TurnLog
from shell.memory.service import RecallService
from shell.memory.user_edit import commit_user_edit
from shell.model import LLM, ModelError, ModelReply
from shell.session.conversation import Conversation
from shell.session.record import SessionRecord
from shell.session.views import ViewRecorder
from shell.streams import merged
from shell.sync.service import SyncService
from shell.tools.toolbox import Toolbox
from shell.tools.workbench import Workbench
from shell.workspace import recovery_notices

RECORDED = ("start", "submit", "dream", "decide", "background_events")
"""The streams a resumed session shows again (`ViewRecorder`): the turns and sweeps, and every
memory write a person asks for (their edit, a conflict settled, a revert)."""


class Agent(ViewRecorder, records=(*RECORDED, "edited_by_user", "resolve_conflict", "revert")):
    """A session with the model: the conversation, its counters, and the memory it writes.

    Its collaborators come wired from `shell.build`; the agent runs the turn between them.
    """

    playback = None  # live, not a recorded session played back (the TUI's `AgentSource`)

    def __init__(
        self,
        settings: Settings,
        *,
        llm: LLM,
        git: GitStore,
        conversation: Conversation,
        window: ContextWindow,
        toolbox: Toolbox,
        request_builder: RequestBuilder,
        lifecycle: MemoryLifecycle,
        recall: RecallService,
        dreamer: Dreamer,
        workbench: Workbench,
        sync: SyncService,
        resumed: bool = False,
        index_in_background: bool = True,
    ) -> None:
        """`index_in_background`: sync the memory index and watch the files from the end of
        the first turn on (the TUI); when false, the index syncs only for a search (headless)."""
        self.settings = settings
        self.llm = llm
        self.git = git
        self.conversation = conversation
        self.window = window
        self.toolbox = toolbox
        self.request_builder = request_builder
        self.lifecycle = lifecycle
        self.recall = recall
        self.dreamer = dreamer
        self.workbench = workbench
        self.sync = sync
        self._resumed = resumed
        self._index_in_background = index_in_background
        self._last_reported = (0, 0)
        self._cancel = Cancellation()

    @property
    def record(self) -> SessionRecord:
        return self.conversation.record

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.conversation.messages

    @property
    def budget(self) -> ContextBudget:
        return self.window.budget

    @property
    def session_id(self) -> str:
        return self.record.session_id

    @property
    def workspace(self) -> Path:
        return self.settings.workspace

    # --- public API ---------------------------------------------------------------------

    async def start(self) -> AsyncIterator[Event]:
        """Announce the session and resolve the context window. The bootstrap files and the
        first token count (which loads the tokenizer) run off the event loop, so a TUI paints
        meanwhile. The model's libraries load in the background from here on, shown as
        `Loading("model")` until they are ready (the start ends then, so a prompt sent meanwhile
        waits in the consumer's queue); the memory index starts later, after the first turn or at
        the first search."""
        # Whether the model is loading is decided before the background load starts: checked
        # after, a load that finished at once (litellm already imported, as in the tests) made
        # the start's Loading events come or not by the threads' race.
        model_loading = not self.llm.loaded()
        self.llm.preload()
        yield SessionStarted(
            session_id=self.session_id,
            resumed=self._resumed,
            model=self.settings.model,
            workspace=str(self.workspace),
            demo=self.settings.demo,
        )
        if model_loading:
            yield Loading("model", done=False)
        if not self.window.resolved and (
            unknown := await asyncio.to_thread(
                self.window.look_up, self.llm.context_window, self.settings.model
            )
        ):
            yield unknown
        async for event in self.workbench.start():  # MCP servers, each bounded in time
            yield event
        bootstrap = await asyncio.to_thread(self.request_builder.bootstrap)
        for event in bootstrap.events:
            yield event
        torn = self.conversation.sessions.torn_lines(self.session_id) if self._resumed else 0
        for notice in await asyncio.to_thread(recovery_notices, self.workspace, torn):
            yield notice
        for event in await asyncio.to_thread(self.sync.recover):  # a pull a kill cut short
            yield event
        self.sync.start()  # the pull at start, in the background: no turn waits on it
        if waiting := await asyncio.to_thread(self.dreamer.waiting):
            yield ProposalsWaiting(waiting)
        yield await asyncio.to_thread(self.usage)
        if model_loading:
            await self.llm.wait_loaded()
            yield Loading("model", done=True)

    async def submit(self, text: str) -> AsyncGenerator[Event]:
        """A user prompt, or a slash command (`shell.commands`; `/help` lists them)."""
        invocation = commands.parse(text)
        if invocation is None:
            stream = self.run_turn(text)
        else:
            stream = commands.run_command(self, invocation)
        async with contextlib.aclosing(stream) as events:
            async for event in events:
                yield event

    def answer_approval(self, call_id: str, choice: ApprovalChoice, reason: str = "") -> bool:
        """The user's answer to the call waiting for approval (`ApprovalRequested`)."""
        return self.workbench.answer(call_id, choice, reason)

    def cancel(self) -> bool:
        """Ask the turn under way to stop at its next safe point (`shell.loop.cancel`): it ends
        with a `TurnCancelled` receipt. False when no turn is running."""
        return self._cancel.request()

    async def run_turn(self, prompt: str) -> AsyncGenerator[Event]:
        self.record.turns += 1
        turn = TurnLog(self.record.turns)
        yield TurnStarted(session_id=self.session_id, turn=turn.number, prompt=prompt)
        for event in self.recall.drain():
            yield event
        if prelude := self._startup_prelude():
            yield prelude
        message = {"role": "user", "content": prompt}
        if (size := self.request_builder.projected([message])) >= self.budget.window:
            # Nothing can make room for it: refused before it enters the conversation.
            yield Error("context_overflow", self.request_builder.too_big(size))
            yield TurnFinished(turn=turn.number, reason="error")
            return
        self.conversation.append(message)
        self._cancel.begin()
        try:
            async for event in self._rounds(turn):
                turn.note(event)
                yield event
        except (asyncio.CancelledError, GeneratorExit):
            turn.reason, turn.killed = "cancelled", True
            raise
        except Exception:
            turn.reason = "error"  # a bug in the core: the consumer gets the exception next
            raise
        finally:
            self._cancel.end()
            self.conversation.close_open_tool_calls()
            self.conversation.prelude = ""
            self.save()
            if not turn.killed:
                for event in self.recall.drain():
                    yield event
                if turn.reason == "cancelled":
                    yield turn.receipt()
                yield TurnFinished(turn=turn.number, reason=turn.reason)
            if self._index_in_background:
                self.recall.start()  # after the first answer, never in its way (once)

    async def _rounds(self, turn: TurnLog) -> AsyncIterator[Event]:
        """Model call → tool calls → model call …, until the model answers without tools; the
        gate (and a flush, a compaction) before every call."""
        overflow_retried = False
        rounds = 0
        while True:
            async for event in self.lifecycle.before_model_call():
                yield event
            if self._cancel.requested:
                turn.cancelled("memory_lifecycle")
                return
            if dropped := self.lifecycle.fit_window():
                yield dropped
            if (size := self.request_builder.projected()) >= self.budget.window:
                yield Error("context_overflow", self.request_builder.too_big(size))
                turn.reason = "error"
                return
            yield self.usage()
            builder = self.request_builder
            sent = builder.count()
            call = ModelCall(self.llm, builder.request(), builder.tool_schemas)
            try:
                async for event in self._cancel.until_requested(call.events()):
                    yield event
            except ModelError as error:
                if error.kind == "context_overflow" and not overflow_retried:
                    overflow_retried = True
                    yield Notice(f"The provider reported a context overflow: {error.message}")
                    async for event in self.lifecycle.flush_then_compact("overflow", None):
                        yield event
                    continue
                yield Error(error.kind, error.message, discard_partial=call.shown_text)
                turn.reason = "error"
                return
            if self._cancel.requested and not call.answered:  # cut mid-answer: not kept
                turn.cancelled("model_call")
                return
            reply = call.reply
            self._count_usage(reply)
            builder.calibrate(reply.prompt_tokens, sent)
            self.conversation.append(reply.message())
            if reply.text:
                yield AssistantMessage(text=reply.text)
            if not reply.tool_calls:
                if not reply.text.strip() and not rounds:  # no text and no tool call at all
                    yield Notice("The model returned an empty answer.", level="warning")
                    turn.reason = "empty"
                yield self.usage()
                return
            tools = run_tool_calls(
                self.toolbox,
                reply.tool_calls,
                side_events=lambda: [*self.recall.drain(), *self.workbench.drain()],
                stop=lambda: self._cancel.requested,
                cancelled=self._cancel.event,
                fit=self.workbench.fit,
            )
            async for item in tools:
                if isinstance(item, ToolDone):
                    self.conversation.append(item.message())
                else:
                    yield item
            if self._cancel.requested:
                turn.cancelled("tool_calls")
                return
            rounds += 1
            if rounds >= self.settings.max_tool_rounds:
                yield Notice(f"Stopped after {rounds} tool rounds in one turn.", level="warning")
                turn.reason = "tool_limit"
                return

    def _startup_prelude(self) -> StartupPreludeInjected | None:
        """A new session's first call gets the recent daily notes as background, once."""
        if not self.record.needs_prelude:
            return None
        prelude, files = startup_prelude(self.workspace, today=self.settings.clock().date())
        self.conversation.prelude = prelude
        self.record.needs_prelude = False
        return StartupPreludeInjected(files=files, chars=len(prelude)) if files else None

    def _count_usage(self, reply: ModelReply) -> None:
        self._last_reported = (reply.prompt_tokens, reply.completion_tokens)
        self.record.prompt_tokens_total += reply.prompt_tokens
        self.record.completion_tokens_total += reply.completion_tokens

    async def compact(self, focus: str | None = None) -> AsyncGenerator[Event]:
        """Manual /compact: flush first if this cycle has not been flushed, then compact."""
        async for event in self.lifecycle.flush_then_compact("manual", focus):
            yield event
        yield self.usage()

    async def flush(self) -> AsyncGenerator[Event]:
        async for event in self.lifecycle.flush("manual"):
            yield event
        yield self.usage()

    async def sync_now(self) -> AsyncGenerator[Event]:
        """`/sync`: pull, then push, now (`shell.sync`)."""
        for event in await self.sync.sync_now():
            yield event

    async def resolve_conflict(self, file: str, take: Take) -> AsyncGenerator[Event]:
        """Settle a sync conflict (`SyncConflict`): keep local, take the remote's, or both."""
        for event in await self.sync.resolve(file, take):
            yield event

    async def tools_listing(self) -> AsyncGenerator[Event]:
        """`/tools`: the tools the model may call, how each is approved, the MCP servers."""
        yield self.workbench.listing()

    async def context_report(self) -> AsyncGenerator[Event]:
        """`/context`: what the next prompt holds, how it was counted, and what was cut."""
        yield self.request_builder.report(self._last_reported)

    async def new_session(self) -> AsyncGenerator[Event]:
        """`/new`: a flush attempt first (or the gate's reason why none), as a compaction has,
        since the context it ends is gone from the model's reach; then a fresh session."""
        async for event in self.lifecycle.flush_before_new_session():
            yield event
        self.conversation.restart(self.settings.model)
        self._last_reported = (0, 0)  # the provider's numbers were the old session's
        self._resumed = False
        yield SessionStarted(
            session_id=self.session_id,
            resumed=False,
            model=self.settings.model,
            workspace=str(self.workspace),
            demo=self.settings.demo,
        )
        yield self.usage()

    async def dream(self, trigger: DreamTrigger = "manual") -> AsyncGenerator[Event]:
        """A dreaming sweep (`shell.dreaming`): proposals for MEMORY.md into the review queue."""
        async with contextlib.aclosing(
            self.dreamer.sweep(trigger, window=self.budget.window)
        ) as events:
            async for event in events:
                yield event

    async def decide(self, decision: Decision) -> AsyncGenerator[Event]:
        """A person's decision on a proposal of the review queue, as events."""
        for event in await asyncio.to_thread(
            self.dreamer.decide, decision, window=self.budget.window
        ):
            yield event

    def open_proposals(self) -> list[Preview]:
        """The proposals waiting for review, with what accepting each would change."""
        return self.dreamer.open_proposals(window=self.budget.window)

    async def edited_by_user(self, path: str) -> AsyncGenerator[Event]:
        """A memory file saved in the user's editor: committed as their edit, then re-indexed."""
        async for event in commit_user_edit(self.lifecycle.files, self.recall, path):
            yield event

    async def revert(self, sha: str) -> AsyncGenerator[Event]:
        """Undo memory commit `sha` as a new commit of the store, which the sync pushes as any
        write: a `MemoryWritten` per file it changed, or a notice of why nothing changed."""
        async for event in revert_events(MemoryHistory(self.git), sha):
            yield event

    def revert_preview(self, sha: str) -> RevertPreview:
        """What reverting `sha` would change, and whether it still applies (blocking: call it
        off the event loop). Raises GitFailure when `sha` names no commit."""
        return MemoryHistory(self.git).preview_revert(sha)

    async def background_events(self) -> AsyncIterator[Event]:
        """Events that happen between turns (index sync, file watching, git sync), for the TUI."""
        async for event in merged(self.recall.events(), self.sync.events()):
            yield event

    async def aclose(self) -> None:
        self.save()
        await self.sync.aclose()
        await self.workbench.aclose()
        await self.recall.aclose()

    # --- bookkeeping ----------------------------------------------------------------------

    def usage(self) -> UsageUpdated:
        return self.request_builder.usage(self._last_reported)

    def origin(self) -> str:
        return self.conversation.origin()

    def save(self) -> None:
        self.conversation.save()

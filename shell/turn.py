"""One turn: model call → tool calls → model call … until the model answers without tools. It
lives above `shell.loop` (the calls), which the lifecycle and dreaming use too.

Before *every* model call runs the one pre-call step (`shell.lifecycle.precall`): the flush gate,
a flush when it says so, compaction only after that, the window fit and the refusal. Each way a
turn ends raises `TurnEnded` with its reason, caught in one place (`TurnLoop.run`).
"""

from __future__ import annotations

import asyncio
import errno
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, replace
from uuid import uuid4

from shell.config import Settings
from shell.context.request import PromptSize, RequestBuilder
from shell.events import (
    AnswerSourced,
    AssistantMessage,
    Error,
    Event,
    Notice,
    StartupPreludeInjected,
    TextCallsRead,
    TextDelta,
    ToolCallStarted,
    TurnEnding,
    TurnFinished,
    TurnStarted,
    UsageUpdated,
)
from shell.lifecycle.manager import MemoryLifecycle
from shell.lifecycle.precall import CallReady, prepare_call
from shell.lifecycle.reinject import startup_prelude
from shell.loop.assist import cairn_call, facts_to_keep, question_in
from shell.loop.calls import ModelCall, ToolDone, run_tool_calls
from shell.loop.cancel import Cancellation, StoppedDuring, TurnLog
from shell.loop.citations import ShownLines, unbacked_notice
from shell.loop.save_claims import UNSAVED_NOTICE, unsaved_claim
from shell.memory.service import RecallService
from shell.model import LLM, ModelError, ModelReply
from shell.model.reply import ToolCallRequest
from shell.model.textcalls import assists, offered_tools, reads_text_calls, with_text_calls
from shell.scopes.routing import about_user
from shell.session.conversation import Conversation
from shell.session.encodable import escaped
from shell.tools.toolbox import Toolbox
from shell.tools.workbench import Workbench

DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO, errno.EFBIG})
"""A disk that cannot take a write: the turn ends with an error, not the session."""


def _unwritable(error: OSError) -> str:
    return (
        f"the turn stopped: Cairn could not write to disk ({error.strerror or error}); "
        "what was committed before is kept, what was not may be lost"
    )


class TurnEnded(Exception):
    """The turn ends here, for `reason` (a cancel says `during` what)."""

    def __init__(self, reason: TurnEnding, during: StoppedDuring | None = None) -> None:
        super().__init__(reason)
        self.reason, self.during = reason, during


@dataclass
class TurnParts:
    """What a turn works with, wired by `shell.build` through the `Agent`."""

    settings: Settings
    llm: LLM
    conversation: Conversation
    toolbox: Toolbox
    request_builder: RequestBuilder
    lifecycle: MemoryLifecycle
    recall: RecallService
    workbench: Workbench


class TurnLoop:
    """Runs the turns of one session, and keeps what the provider reported for the last call."""

    def __init__(self, parts: TurnParts, *, index_in_background: bool) -> None:
        self.parts = parts
        self.cancellation = Cancellation()
        self.reported = (0, 0)
        """The provider's prompt and completion tokens for this session's last call."""
        self._index_in_background = index_in_background
        self._shown = ShownLines()
        self._prompt = ""
        """The prompt of the turn running."""

    def usage(self, size: PromptSize | None = None) -> UsageUpdated:
        """The meter; `size`: the prompt's count when the pre-call step just took it."""
        return self.parts.request_builder.usage(self.reported, size)

    async def run(self, prompt: str) -> AsyncGenerator[Event]:
        p = self.parts
        p.conversation.record.turns += 1
        unsaved: OSError | None = None
        try:
            p.conversation.save()  # a kill mid-turn must not give the next turn this one's number
        except OSError as error:
            if error.errno not in DISK_ERRNOS:
                raise
            unsaved = error
        turn = TurnLog(p.conversation.record.turns)
        yield TurnStarted(
            session_id=p.conversation.record.session_id, turn=turn.number, prompt=prompt
        )
        if unsaved is not None:  # nothing of this turn could be kept: it does not begin
            yield Error("storage", _unwritable(unsaved))
            yield TurnFinished(turn=turn.number, reason="error")
            return
        for event in p.recall.drain():
            yield event
        if prelude := self._startup_prelude():
            yield prelude
        message = {"role": "user", "content": prompt}
        if (size := p.request_builder.projected([message])) >= p.lifecycle.budget.window:
            # Nothing can make room for it: refused before it enters the conversation.
            yield Error("context_overflow", p.request_builder.too_big(size))
            yield TurnFinished(turn=turn.number, reason="error")
            return
        p.conversation.append(message)
        self._prompt = prompt
        self.cancellation.begin()
        unwritable: OSError | None = None
        try:
            async for event in self._assisted(prompt, turn):
                turn.note(event)
                yield event
        except OSError as error:
            if error.errno not in DISK_ERRNOS:
                turn.reason = "error"
                raise
            turn.reason, unwritable = "error", error
        except TurnEnded as ended:
            turn.reason = ended.reason
            if ended.during is not None:
                turn.cancelled(ended.during)
        except (asyncio.CancelledError, GeneratorExit):
            turn.reason, turn.killed = "cancelled", True
            raise
        except Exception:
            turn.reason = "error"  # a bug in the core: the consumer gets the exception next
            raise
        finally:
            self.cancellation.end()
            p.conversation.close_open_tool_calls(_cause(turn))
            p.conversation.prelude = ""
            try:
                p.conversation.save()
            except OSError as error:
                if error.errno not in DISK_ERRNOS:
                    raise
                turn.reason, unwritable = "error", unwritable or error
            if not turn.killed:
                if unwritable is not None:
                    yield Error("storage", _unwritable(unwritable))
                for event in p.recall.drain():
                    yield event
                if turn.reason == "cancelled":
                    yield turn.receipt()
                if turn.reason == "completed" and unsaved_claim(
                    turn.answer, turn.written, turn.tools_finished
                ):
                    yield Notice(UNSAVED_NOTICE, level="warning")
                yield TurnFinished(turn=turn.number, reason=turn.reason)
            if self._index_in_background:
                p.recall.start()  # after the first answer, never in its way (once)

    async def _assisted(self, prompt: str, turn: TurnLog) -> AsyncIterator[Event]:
        """`_rounds`, with the calls Cairn makes for a model that does not (`memory_assist`):
        a question searched before the first call, a "remember …" or a fact told kept after an
        answer that wrote nothing."""
        settings = self.parts.settings
        if not assists(settings.memory_assist, settings.api_base):
            async for event in self._rounds():
                yield event
            return
        if (query := question_in(prompt)) is not None:
            async for event in self._cairn_call("memory_search", {"query": query}, turn):
                yield event
        try:
            async for event in self._rounds():
                yield event
        except TurnEnded as ended:
            facts = facts_to_keep(prompt)
            if ended.reason == "completed" and not turn.written and facts:
                arguments = {"text": "\n".join(facts), **self._user_scope(facts)}
                async for event in self._cairn_call("memory_append", arguments, turn):
                    yield event
            raise

    def _user_scope(self, facts: list[str]) -> dict[str, str]:
        """`scope` "user" for facts all about the user, when memory_append takes a scope (a
        project is open), by the flush's rule (`shell.scopes.routing`)."""
        append = self.parts.toolbox.get("memory_append")
        offered = append is not None and "scope" in append.parameters.get("properties", {})
        return {"scope": "user"} if offered and all(map(about_user, facts)) else {}

    async def _cairn_call(
        self, name: str, arguments: dict[str, str], turn: TurnLog
    ) -> AsyncIterator[Event]:
        """One call Cairn makes for the model, kept in the conversation as the model's own."""
        if self.parts.toolbox.get(name) is None:
            return
        call = cairn_call(name, arguments, turn.number)
        self.parts.conversation.append(ModelReply("", [call], "tool_calls").message())
        async for event in self._run_tools([call]):
            yield event

    async def _rounds(self) -> AsyncIterator[Event]:
        """Rounds until one raises `TurnEnded`: the pre-call step, the model call, the tools."""
        limit = self.parts.settings.max_tool_rounds
        rounds, overflow, retried = 0, None, False
        while rounds < limit:
            ready: CallReady | None = None
            stop = lambda: self.cancellation.requested  # noqa: E731
            async for item in prepare_call(self.parts.lifecycle, stop=stop, overflow=overflow):
                if isinstance(item, CallReady):
                    ready = item
                else:
                    yield item
            assert ready is not None
            if ready.cancelled:
                raise TurnEnded("cancelled", "memory_lifecycle")
            if ready.refused:
                yield Error("context_overflow", ready.refused)
                raise TurnEnded("error")
            yield self.usage(ready.size)
            reply, overflow = None, None
            try:
                async for got in self._call(ready, retry=not retried):
                    if isinstance(got, ModelReply):
                        reply = got
                    else:
                        yield got
            except _Overflow as error:
                overflow, retried = str(error), True
                continue
            assert reply is not None
            async for event in self._answer_or_tools(reply, rounds):
                yield event
            rounds += 1
        yield Notice(f"Stopped after {rounds} tool rounds in one turn.", level="warning")
        raise TurnEnded("tool_limit")

    async def _call(self, ready: CallReady, *, retry: bool) -> AsyncIterator[Event | ModelReply]:
        """One model call; its reply last. A first context overflow raises `_Overflow`."""
        p, sent = self.parts, ready.counted
        options = {"counted": True} if ready.server_counted else None
        call = ModelCall(
            p.llm, p.request_builder.request(), p.request_builder.tool_schemas, options=options
        )
        try:
            async for event in self.cancellation.until_requested(call.events()):
                yield (
                    replace(event, text=escaped(event.text))
                    if isinstance(event, TextDelta)
                    else event
                )
        except ModelError as error:
            if error.prompt_tokens:  # the provider said how it counted the prompt it refused
                p.request_builder.calibrate(error.prompt_tokens, sent)
            if error.kind == "context_overflow" and retry:
                raise _Overflow(error.message) from error
            yield Error(error.kind, error.message, discard_partial=call.shown_text)
            raise TurnEnded("error") from error
        if self.cancellation.requested and not call.answered:  # cut mid-answer: not kept
            raise TurnEnded("cancelled", "model_call")
        reply = _encodable(call.reply)
        if (read := self._calls_in_text(reply)) is not None:
            reply, dropped = read
            names = [c.name for c in reply.tool_calls]
            yield TextCallsRead(names=names, prose=reply.text, dropped_chars=dropped)
        self._count_usage(reply)
        p.request_builder.calibrate(reply.prompt_tokens, sent)
        p.conversation.append(reply.message())
        yield reply

    async def _answer_or_tools(self, reply: ModelReply, rounds: int) -> AsyncIterator[Event]:
        """The reply's text; the turn ends with an answer without tools, else the tools run."""
        if reply.text:
            yield AssistantMessage(text=reply.text)
        if not reply.tool_calls:
            if unbacked := self._shown.unbacked(reply.text):
                yield Notice(unbacked_notice(unbacked), level="warning")
            elif restated := self._shown.restated(reply.text, self._prompt):
                yield AnswerSourced(citation=restated[0], snippet=restated[1])
            empty = not reply.text.strip() and not rounds  # no text and no tool call at all
            if empty:
                yield Notice("The model returned an empty answer.", level="warning")
            yield self.usage()
            raise TurnEnded("empty" if empty else "completed")
        async for event in self._run_tools(reply.tool_calls):
            yield event

    async def _run_tools(self, calls: list[ToolCallRequest]) -> AsyncIterator[Event]:
        """Run `calls`, each result kept in the conversation as it comes."""
        p = self.parts
        tools = run_tool_calls(
            p.toolbox,
            calls,
            side_events=lambda: [*p.recall.drain(), *p.workbench.drain()],
            stop=lambda: self.cancellation.requested,
            cancelled=self.cancellation.event,
            fit=p.workbench.fit,
        )
        async for item in tools:
            if isinstance(item, ToolDone):
                p.conversation.append(item.message())
                continue
            if isinstance(item, ToolCallStarted):  # kept before the call runs: see `started`
                p.conversation.started(item.call_id)
            self._shown.see(item)
            yield item
        if self.cancellation.requested:
            raise TurnEnded("cancelled", "tool_calls")

    def _calls_in_text(self, reply: ModelReply) -> tuple[ModelReply, int] | None:
        """The reply with the tool calls its text holds as calls, and how many characters
        after them were dropped, when the setting reads them (`text_tool_calls`) and it holds
        any; else None."""
        settings = self.parts.settings
        if not reads_text_calls(settings.text_tool_calls, settings.api_base):
            return None
        offered = offered_tools(self.parts.request_builder.tool_schemas)
        turn = self.parts.conversation.record.turns
        return with_text_calls(reply, offered, lambda n: f"text-{turn}-{uuid4().hex[:8]}-{n}")

    def _count_usage(self, reply: ModelReply) -> None:
        record = self.parts.conversation.record
        self.reported = (reply.prompt_tokens, reply.completion_tokens)
        record.prompt_tokens_total += reply.prompt_tokens
        record.completion_tokens_total += reply.completion_tokens

    def _startup_prelude(self) -> StartupPreludeInjected | None:
        """A new session's first call gets the recent daily notes as background, once: its own
        memory's (a project's, when one is open: where its writes went)."""
        record, settings = self.parts.conversation.record, self.parts.settings
        if not record.needs_prelude:
            return None
        scopes = self.parts.request_builder.scopes
        own = scopes.own.workspace if scopes else settings.workspace
        prelude, files = startup_prelude(own, today=settings.clock().date())
        self.parts.conversation.prelude = prelude
        record.needs_prelude = False
        return StartupPreludeInjected(files=files, chars=len(prelude)) if files else None


def _cause(turn: TurnLog) -> str:
    """Who ended a turn that left tool calls without a result, as their answers say it: only a
    cancel the user asked for is the user's."""
    if turn.killed:
        return "the turn was stopped"
    return (
        "the user cancelled the turn"
        if turn.reason == "cancelled"
        else "the turn ended on an error"
    )


def _encodable(reply: ModelReply) -> ModelReply:
    """The reply with each lone surrogate escaped (`shell.session.encodable`): the tools, the
    events and the transcript then hold what the next request can send. In the arguments'
    JSON the escape reads back as the surrogate the model meant, so a tool still sees it."""
    calls = [
        replace(
            call, id=escaped(call.id), name=escaped(call.name), arguments=escaped(call.arguments)
        )
        for call in reply.tool_calls
    ]
    return replace(reply, text=escaped(reply.text), tool_calls=calls)


class _Overflow(Exception):
    """The provider said the prompt is too big: the pre-call step runs again with its message."""

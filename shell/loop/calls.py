"""The two steps every loop of Cairn repeats: ask the model, then run the tools it called.

The turn, the memory flush and compaction all go through `ModelCall` and `run_tool_calls`, so
forwarding retries, hiding the text of silent calls and reporting tool events are written once.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from shell.events import (
    Event,
    ModelRetry,
    SearchPerformed,
    TextDelta,
    ToolCallStarted,
    ToolCallStopped,
)
from shell.secrets.door import redacted
from shell.tools.toolbox import CallContext, ToolResult, event_arguments

if TYPE_CHECKING:
    from shell.model import LLM, ModelReply, ToolCallRequest
    from shell.tools.toolbox import Toolbox


NOT_RUN = "Not run: the user cancelled the turn before this call started."


class ModelCall:
    """One streamed model call: forward its events, then read its reply.

        call = ModelCall(llm, request, schemas, silent=True)
        async for event in call.events():
            yield event
        reply = call.reply

    `silent` hides the text as it streams (the flush and the summariser are not chat); retries
    and the like are shown either way. `ModelError` propagates from `events()`.
    """

    def __init__(
        self,
        llm: LLM,
        request: list[dict[str, Any]],
        schemas: Sequence[dict[str, Any]] = (),
        *,
        silent: bool = False,
        options: dict[str, Any] | None = None,
    ) -> None:
        """`options`: keyword options for `LLM.stream` (`response_format`, `max_tokens`)."""
        self._llm = llm
        self._request = request
        self._schemas = list(schemas)
        self._silent = silent
        self._options = options or {}
        self._reply: ModelReply | None = None
        self.shown_text = False
        """Whether text of the attempt under way was shown (and is void if the call fails)."""

    async def events(self) -> AsyncIterator[Event]:
        from shell.model import ModelReply

        async for item in self._llm.stream(self._request, self._schemas, **self._options):
            if isinstance(item, ModelReply):
                self._reply = item
            elif not (self._silent and isinstance(item, TextDelta)):
                if isinstance(item, TextDelta):
                    self.shown_text = True
                elif isinstance(item, ModelRetry) and item.discard_partial:
                    self.shown_text = False
                yield item

    @property
    def answered(self) -> bool:
        """Whether the provider's whole reply came (a cancel may have cut the call before)."""
        return self._reply is not None

    @property
    def reply(self) -> ModelReply:
        if self._reply is None:
            raise RuntimeError("ModelCall.reply read before events() finished")
        return self._reply


@dataclass(frozen=True)
class ToolDone:
    """One tool call with its result: what `run_tool_calls` yields after the call's events."""

    call: ToolCallRequest
    result: ToolResult

    def message(self) -> dict[str, Any]:
        """The tool message that answers the call in the transcript."""
        return {"role": "tool", "tool_call_id": self.call.id, "content": self.result.content}


async def run_tool_calls(
    toolbox: Toolbox,
    calls: Iterable[ToolCallRequest],
    *,
    side_events: Callable[[], Iterable[Event]] = tuple,
    stop: Callable[[], bool] = bool,
    cancelled: asyncio.Event | None = None,
    fit: Callable[[str, ToolResult], ToolResult] | None = None,
) -> AsyncIterator[Event | ToolDone]:
    """Run the calls in order. For each: `ToolCallStarted`, the events `side_events` has
    collected meanwhile (a background index, say), the tool's own events, `ToolCallFinished`,
    then a `ToolDone` for the caller to put in its transcript. A tool that fails, or one the
    toolbox does not offer, is an error result, never an exception. The events carry the
    arguments and the result with secrets redacted (`shell.secrets.door`): a card, a trace
    and `cairn run`'s JSON show what memory stored, never the credential.

    Once `stop()` is true (a cancel), the calls not yet begun do not run: each is a
    `ToolCallStopped` and a `ToolDone` that tells the model so. A call under way is not cut,
    except by itself: it sees `cancelled` set (a command kills its process group; a memory
    write, short and never half-done, runs to its end). What a call reports while it runs (an
    approval, a command's output) is yielded as it comes. `fit` cuts a result too big for the
    context before anything shows or keeps it (`shell.tools.workbench.Workbench.fit`).
    """
    cancelled = cancelled or asyncio.Event()
    for call in calls:
        shown = redacted(event_arguments(call.arguments))  # the tool gets them as sent
        if stop():
            yield ToolCallStopped(call_id=call.id, name=call.name, arguments=shown)
            yield ToolDone(call, ToolResult(NOT_RUN, error="cancelled before it started"))
            continue
        yield ToolCallStarted(
            call_id=call.id,
            name=call.name,
            arguments=shown,
            from_text=call.from_text,
            by_cairn=call.by_cairn,
        )
        live: asyncio.Queue[Event] = asyncio.Queue()
        context = CallContext(call.id, live.put_nowait, cancelled)
        running = asyncio.ensure_future(toolbox.call(call.name, call.arguments, context))
        try:
            while not running.done() or not live.empty():
                getting = asyncio.ensure_future(live.get())
                await asyncio.wait({running, getting}, return_when=asyncio.FIRST_COMPLETED)
                if getting.done():
                    yield getting.result()
                else:
                    getting.cancel()
        finally:
            if not running.done():  # the consumer went away: the call stops with it
                cancelled.set()
                await asyncio.wait({running})
        result = running.result()
        if fit is not None:
            result = fit(call.id, result)
        for event in side_events():
            yield event
        for event in result.events:  # a tool does not know its call: it is said here
            yield replace(event, call_id=call.id) if isinstance(event, SearchPerformed) else event
        finished = result.finished(call.id, call.name)
        yield replace(finished, result=redacted(finished.result))
        yield ToolDone(call, result)

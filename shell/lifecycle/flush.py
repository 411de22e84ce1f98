"""The pre-compaction memory flush: a silent turn that asks the model to store durable facts in
today's note through the pinned `memory_append` tool, before compaction throws the detail away.
Its text is never shown as chat; only its tool calls and memory writes are reported. Whether it
runs is the gate's decision (`gate.py`).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from uuid import uuid4

from shell import prompts
from shell.events import (
    Event,
    FlushEnding,
    FlushStarted,
    FlushTrigger,
    MemoryWritten,
)
from shell.loop.calls import ModelCall, ToolDone, run_tool_calls
from shell.model.textcalls import offered_tools, with_text_calls
from shell.text import shorten
from shell.tools.toolbox import Tool, Toolbox

if TYPE_CHECKING:
    from shell.model import LLM

MAX_ERROR_CHARS = 200


@dataclass(frozen=True)
class FlushOutcome:
    """The last item `run_flush` yields: the caller updates the cycle and says `FlushFinished`.

    `outcome`: "written" (at least one append succeeded), "no_reply" (the model said NO_REPLY),
    "ignored" (it answered without the tool or the marker; counts as a failure, so a model that
    cannot flush is noticed) or "failed" (a model error, or every tool call failed).
    """

    outcome: FlushEnding
    lines: int = 0
    commit: str | None = None
    error: str | None = None
    by_rule: bool = False
    """Written by the flush by rule (`shell.lifecycle.rule_flush`), not by the model."""


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
    text_calls: bool = False,
    timer: Callable[[], float] = time.perf_counter,
    on_counted: Callable[[list[dict[str, Any]], list[dict[str, Any]], int], None] | None = None,
    counted: bool = False,
) -> AsyncIterator[Event | FlushOutcome]:
    """Run one silent flush turn: model → memory_append calls → model, at most `max_rounds`.

    Args:
        llm: The model client (`shell.model.LLM`).
        messages: The conversation as it is now, before any compaction (no system message).
        system_prompt: The session's system prompt; the flush instructions are appended.
        tool: The pinned, append-only memory tool; the only tool offered.
        target: The workspace-relative note the flush may append to (memory/YYYY-MM-DD.md).
        cycle: The compaction count the flush belongs to.
        trigger: Why it runs: "tokens", "transcript_size" or "manual".
        now: The current time, shown to the model.
        max_rounds: Model calls allowed.
        compact_tools: Send the tool's compact schema (a small window: `RequestBuilder`).
        text_calls: Read a call the model wrote as text as a call (`shell.model.textcalls`).
        timer: Monotonic seconds, for the tool calls' durations.
        on_counted: Told each call's messages and tool schemas with the provider's count of
            that prompt, when it sent one (the flush's calibration learns from it).
        counted: The server counted the first call's prompt before it (`LLM.count`): it is
            not asked again after.

    Yields:
        FlushStarted; tool call and memory events (never TextDelta); and finally a
        `FlushOutcome` (not an event): the caller, which keeps the cycle's failures, says
        `FlushFinished`. Cancellation propagates without an outcome.
    """
    from shell.model import ModelError

    yield FlushStarted(target=target, cycle=cycle, trigger=trigger)
    conversation = flush_request(messages, system_prompt, target, now)
    toolbox = Toolbox([tool], timer=timer)
    schemas = toolbox.schemas(compact=compact_tools)
    tally = _Tally()
    for _ in range(max(1, max_rounds)):
        options = {"counted": True} if counted else None
        counted = False  # a later round's prompt holds tool results the server has not counted
        call = ModelCall(llm, conversation, schemas, silent=True, options=options)
        try:
            async for event in call.events():
                yield event
        except ModelError as error:
            tally.model_error = f"{error.kind}: {error.message}"
            break
        reply = call.reply
        if on_counted is not None and reply.prompt_tokens:
            on_counted(conversation, schemas, reply.prompt_tokens)
        offered = offered_tools(toolbox.schemas())
        if text_calls and (read := with_text_calls(reply, offered, _flush_id)) is not None:
            reply = read[0]
        if not reply.tool_calls:
            tally.answer = reply.text
            break
        conversation.append(reply.message())
        async for item in run_tool_calls(toolbox, reply.tool_calls):
            if isinstance(item, ToolDone):
                conversation.append(item.message())
                tally.count(item)
            else:
                tally.see(item)
                yield item
    yield tally.outcome()


def flush_request(
    messages: list[dict[str, Any]], system_prompt: str, target: str, now: str
) -> list[dict[str, Any]]:
    """The flush's first request: the session's system prompt with the flush instructions,
    the conversation, and the flush prompt."""
    return [
        {"role": "system", "content": f"{system_prompt}\n\n{prompts.flush_system(target)}"},
        *messages,
        {"role": "user", "content": prompts.flush_prompt(target, now)},
    ]


def _flush_id(n: int) -> str:
    return f"text-flush-{uuid4().hex[:8]}-{n}"

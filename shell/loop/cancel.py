"""Cooperative cancellation of a turn, and the turn's own log that becomes its receipt.

A cancel (`Agent.cancel()`, the TUI's esc) does not kill the task running the turn: it asks the
turn to stop at its next safe point. A model call under way is aborted (its answer is cut and
not kept); a tool call already running finishes, since a memory write is short and must not be
cut in half, and reports its real result (a command is the exception: it sees `event` set and
kills its process group); the calls after it do not run (`ToolCallStopped`);
then the turn ends with a `TurnCancelled` receipt and `TurnFinished("cancelled")`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from shell.events import (
    AssistantMessage,
    Event,
    MemoryWritten,
    ToolCallFinished,
    ToolCallStopped,
    TurnCancelled,
    TurnEnding,
)

StoppedDuring = Literal["model_call", "tool_calls", "memory_lifecycle"]
T = TypeVar("T")


class Cancellation:
    """The cancel request of the turn under way: `request()` sets it, the turn reads it."""

    def __init__(self) -> None:
        self._requested = asyncio.Event()
        self.active = False
        """Whether a turn is running that will honour a request."""

    @property
    def requested(self) -> bool:
        return self._requested.is_set()

    @property
    def event(self) -> asyncio.Event:
        """Set by a request: what a running tool call waits on to stop early."""
        return self._requested

    def request(self) -> bool:
        """Ask the running turn to stop. False when no turn runs (nothing to ask)."""
        if not self.active:
            return False
        self._requested.set()
        return True

    def begin(self) -> None:
        self._requested.clear()
        self.active = True

    def end(self) -> None:
        self.active = False
        self._requested.clear()

    async def until_requested(self, stream: AsyncIterator[T]) -> AsyncGenerator[T]:
        """The items of `stream` until it ends, or until a cancel is requested: then the step
        under way is cancelled (aborting a model call mid-stream) and the stream closed."""
        waiter = asyncio.ensure_future(self._requested.wait())
        step: asyncio.Future[T] | None = None
        try:
            while not self.requested:
                step = asyncio.ensure_future(anext(stream))
                await asyncio.wait({step, waiter}, return_when=asyncio.FIRST_COMPLETED)
                if not step.done():
                    return  # the finally cancels the step
                if isinstance(step.exception(), StopAsyncIteration):
                    return
                yield step.result()
        finally:
            waiter.cancel()
            if step is not None and not step.done():
                step.cancel()  # also when this task itself is cancelled: no orphan stream
                await asyncio.wait({step})
            if isinstance(stream, AsyncGenerator):
                with contextlib.suppress(Exception):
                    await stream.aclose()


@dataclass
class TurnLog:
    """What one turn did so far: how it ends, and what its cancel receipt lists."""

    number: int
    reason: TurnEnding = "completed"
    killed: bool = False
    """The task was cancelled (not a cooperative cancel): nothing more may be yielded."""
    stopped_during: StoppedDuring = "memory_lifecycle"
    tools_finished: list[str] = field(default_factory=list)
    tools_stopped: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)
    answer: str = ""
    """The text of the model's last message."""

    def note(self, event: Event) -> None:
        match event:
            case AssistantMessage(text=text):
                self.answer = text
            case ToolCallFinished(name=name):
                self.tools_finished.append(name)
            case ToolCallStopped(name=name):
                self.tools_stopped.append(name)
            case MemoryWritten(path=path, commit=commit):
                self.written.append(path)
                if commit:
                    self.commits.append(commit)
            case _:
                pass

    def cancelled(self, during: StoppedDuring) -> None:
        self.reason = "cancelled"
        self.stopped_during = during

    def receipt(self) -> TurnCancelled:
        return TurnCancelled(
            turn=self.number,
            stopped_during=self.stopped_during,
            tools_finished=list(self.tools_finished),
            tools_stopped=list(self.tools_stopped),
            written=list(dict.fromkeys(self.written)),
            commits=list(self.commits),
        )

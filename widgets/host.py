"""What the screens and F4 need of the app, as a Protocol: `CairnApp` has this shape. They
import this module, never `widgets.app`, which imports them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Protocol

from textual.worker import Worker

from shell.events import Event
from widgets.source import AgentSource

StreamMaker = Callable[[], AsyncIterator[Event]]
"""A core stream, made when its worker starts (`AgentSource.submit` and the like)."""


class AgentHost(Protocol):
    """The agent, whether a turn runs, and the two ways the app runs a core stream (each event
    goes to the bridge, and to the trace)."""

    @property
    def agent(self) -> AgentSource: ...

    @property
    def busy(self) -> bool: ...

    @property
    def started(self) -> bool:
        """Whether the agent is built and started (the first frame comes before it)."""
        ...

    def run_events(self, make_stream: StreamMaker) -> Worker[None]:
        """A stream the user started (one at a time: the prompt waits while it runs)."""
        ...

    def run_background(self, make_stream: StreamMaker) -> Worker[None]:
        """A stream beside the turn (index sync, a conflict settled)."""
        ...


async def watched(events: AsyncIterator[Event], seen: list[Event]) -> AsyncIterator[Event]:
    """`events`, each also kept in `seen` (a screen that runs a core stream through the app
    reads what came of it)."""
    async for event in events:
        seen.append(event)
        yield event

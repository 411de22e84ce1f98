"""A resumed session's earlier view, shown again before its start."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from shell.events import Event, TurnStarted
from widgets.bridge import EventBridge
from widgets.source import AgentSource


async def with_history(agent: AgentSource, bridge: EventBridge) -> AsyncIterator[Event]:
    """The agent's start, after what a resumed session showed before (`agent.history()`): those
    events go to the widgets straight away, not through the stream (a trace of this run holds
    only its own events), and a mark ends them. A view that cannot be shown is said; the session
    starts all the same."""
    try:
        past = await asyncio.to_thread(agent.history)
        bridge.live = False  # what the past asked was answered then: no modal
        for event in past:
            await bridge.route(event)
    except Exception as error:
        past = []
        message = f"the earlier view of this session could not be shown: {error}"
        await bridge.transcript.add_notice(message, "warning")
    finally:
        bridge.live = True
    if past:
        turns = sum(isinstance(event, TurnStarted) for event in past)
        await bridge.transcript.add_notice(
            f"— resumed session {agent.session_id}: {turns} earlier turn(s) above —"
        )
        bridge.status.show_review(0)  # what waits for review now, the start says
    async for event in agent.start():
        yield event

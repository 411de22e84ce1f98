"""App-wide Textual messages."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from shell.events import Event


@dataclass
class AgentEvent(Message):
    """One core event, posted by the agent worker for the bridge to route."""

    event: Event
    background: bool = False
    """Came between turns (`background_events`), not from a stream the user started."""

"""What the pilot tests share: the terminal size, the prompts they send, the daily note they
write, and the text a widget paints."""

from __future__ import annotations

from textual.geometry import Region
from textual.widget import Widget

SIZE = (120, 40)
TOLD = "remember that our deploy window is Friday 14:00"
ASKED = "when is our deploy window?"
CHAT = (
    "My sister lives in Tromsø.",
    "The build server is ci-7.internal.",
    "how are you today?",
    "Priya leads the billing migration.",
    "where does my sister live?",
    "tell me about the build server",
)
"""Enough of a conversation that /compact has turns to summarise past the kept tail."""
DAILY = "memory/2026-11-30.md"


def painted(widget: Widget) -> str:
    """The text a widget paints on screen, line by line."""
    width, height = widget.region.size
    return "\n".join(strip.text for strip in widget.render_lines(Region(0, 0, width, height)))

"""The assistant's answer, rendered as Markdown (`Prose`: what it quotes stays as written).

Markdown costs 35 ms of imports (markdown-it, linkify, Pygments), a seventh of a bare Textual
app's start: this module is loaded by the first reply (`Transcript`), not before the first frame.
"""

from __future__ import annotations

from widgets.cards.prose import Prose


class AssistantReply(Prose):
    """The assistant's streamed answer for one model call."""

    DEFAULT_CSS = """
    AssistantReply { margin: 0 0 1 0; padding: 0 1; background: transparent; }
    AssistantReply.-cut { opacity: 50%; }
    """

    def describe(self) -> str:
        cut = " (cut, not kept)" if self.has_class("-cut") else ""
        return f"assistant{cut}: {self.source.strip()}"

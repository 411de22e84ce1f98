"""Replies a small model gave twice, word for word, left out of what it is sent next.

Qwen2.5-Coder-1.5B answered the result of its one call with "I apologize, but I can't process
this input as it's not a valid JSON response", then gave that same reply to 22 of its 30
prompts (stories, statements, questions: `bench/real_server`, 2026-12-04); a run the day before
broke the same way with "I can't execute commands …". Each copy in the context makes the next
likelier. A reply given twice word for word answers at most one of the prompts it followed, so
with `memory_assist` every instance of it stays in the session and on screen but is left out of
later requests: the model is no longer shown the pattern it copies.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any


def _key(message: dict[str, Any]) -> str:
    """A plain answer's words (spacing aside); empty for anything else (a call, a result)."""
    content = message.get("content")
    if message.get("role") != "assistant" or message.get("tool_calls"):
        return ""
    if not isinstance(content, str):
        return ""
    return " ".join(content.split())


def without_copies(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """`messages` less every plain answer that was given more than once, word for word."""
    given = Counter(key for message in messages if (key := _key(message)))
    return [message for message in messages if given[_key(message)] < 2]


def copies_earlier(text: str, earlier: Sequence[dict[str, Any]]) -> bool:
    """Whether the answer `text` repeats one of the `earlier` messages' plain answers."""
    key = " ".join(text.split())
    return bool(key) and any(_key(message) == key for message in earlier)

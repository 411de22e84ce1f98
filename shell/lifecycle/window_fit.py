"""The last resort before a call: drop the oldest turns until the prompt fits the window.

Flush and compaction come first; when even a compacted conversation (or one whose compaction
failed) would overflow the window by our count, the oldest whole turns leave the live context.
They stay in the session's transcript on disk, and the flush has written what mattered in them
to today's note when it could.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shell.messages import is_summary_message
from shell.text import shorten

REPLY_GIST_CHARS = 300
"""How much of each assistant reply and tool result the flush sees when the whole conversation
does not fit: what the user said matters most to memory, a long story least."""


def oldest_turns_dropped(
    messages: list[dict[str, Any]], fits: Callable[[list[dict[str, Any]]], bool]
) -> list[dict[str, Any]]:
    """The messages without their oldest whole turns, the fewest dropped that `fits`.

    A turn runs from a user message to the next; the last turn always stays, and so does a
    compaction summary at the head while dropping turns alone can make it fit. When nothing
    fits, the smallest candidate: the last turn alone.
    """
    head = 1 if messages and is_summary_message(messages[0]) else 0
    starts = [i for i in range(head, len(messages)) if messages[i].get("role") == "user"]
    candidates = [[*messages[:head], *messages[start:]] for start in starts[1:]]
    if head and starts:
        candidates.append(messages[starts[-1] :])
    for kept in candidates:
        if fits(kept):
            return kept
    return candidates[-1] if candidates else messages


def replies_shortened(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages with every assistant reply and tool result cut to `REPLY_GIST_CHARS`; the
    user's own messages (and a compaction summary) whole."""
    return [
        {**m, "content": shorten(m["content"], REPLY_GIST_CHARS)}
        if m.get("role") in ("assistant", "tool") and isinstance(m.get("content"), str)
        else m
        for m in messages
    ]


def drop_entry(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The transcript entry that rebuilds the live list after a drop (`SessionStore.messages`):
    the summary kept at the head, if any, then the last `kept` messages."""
    summary = bool(messages) and is_summary_message(messages[0])
    return {"kind": "drop", "summary_kept": summary, "kept": len(messages) - summary}

"""An answer that says it saved something in a turn that wrote nothing to memory.

Qwen2.5-Coder-1.5B answered 4 of 30 turns of `bench/real_server` with "I've noted that" and made
no write: the user believes a fact is kept that no later session will find. The turn says so
beside the answer (`TurnLoop`), unless something was written or a tool other than memory's ran
(the claim may be about that tool's work).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

CLAIMED_SAVE = re.compile(
    r"\bI(?:'ve|’ve| have|'ll|’ll| will)\s+(?:now\s+|also\s+|just\s+)?"
    r"(?:saved|stored|noted|recorded|remembered|remember|made\s+a\s+note|"
    r"keep\s+(?:that|this|it)\s+in\s+mind)\b"
    r"|\bI\s+(?:saved|stored|noted|recorded)\b"
    r"|\b(?:saved|stored|added|written|recorded|noted)\s+(?:it\s+|that\s+|this\s+)?"
    r"(?:to|in|into)\s+(?:your\s+|my\s+|the\s+|today's\s+)?(?:memory|notes?|daily\s+note)\b"
    r"|^\s*(?:noted|got\s+it,?\s+noted|saved)\b",
    re.IGNORECASE,
)
"""First-person claims ("I've saved", "I'll remember", "added to your notes", a leading
"Noted"); "as you noted", "I remember that you…" (recall) and "I wrote you a poem" or "I added a
twist" (work in the answer) do not count."""

UNSAVED_NOTICE = (
    "The answer says it saved something, but nothing was written to memory this turn: "
    "ask again, or /flush to save what is worth keeping now."
)


def claims_a_save(answer: str) -> bool:
    return bool(CLAIMED_SAVE.search(answer))


def unsaved_claim(answer: str, written: Sequence[str], tools: Sequence[str]) -> bool:
    """Whether a completed turn's answer claims a save that did not happen."""
    if written or any(not tool.startswith("memory_") for tool in tools):
        return False
    return claims_a_save(answer)

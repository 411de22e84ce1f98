"""Shortening text for display: the one ellipsis rule the core and the TUI share."""

from __future__ import annotations

__all__ = ["ELLIPSIS", "shorten"]

ELLIPSIS = "…"


def shorten(text: str, limit: int) -> str:
    """`text` unchanged when it has at most `limit` characters, else its first `limit - 1`
    characters and "…", so the result is `limit` characters long ("…" alone when `limit` is 0).

    Cuts mid-word and keeps newlines and trailing spaces; callers that want one line collapse
    whitespace first.
    """
    if len(text) <= limit:
        return text
    return text[: max(0, limit - 1)] + ELLIPSIS

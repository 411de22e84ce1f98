"""Small text formatters shared by the widgets (token counts, durations, one-line args)."""

from __future__ import annotations

import json
from typing import Any

from shell.text import shorten


def tokens(count: int) -> str:
    """Compact token count: 950, 1.2k, 8.2k, 128k, 1.0M."""
    if count < 1000:
        return str(count)
    if count < 100_000:
        return f"{count / 1000:.1f}k"
    if count < 1_000_000:
        return f"{count // 1000}k"
    return f"{count / 1_000_000:.1f}M"


def duration(ms: float) -> str:
    if ms < 1000:
        return f"{ms:.0f} ms"
    return f"{ms / 1000:.1f} s"


def one_line(value: Any, limit: int = 80) -> str:
    """A single-line, shortened rendering of tool arguments or a result."""
    if isinstance(value, dict):
        text = ", ".join(
            f"{key}={json.dumps(item, ensure_ascii=False)}" for key, item in value.items()
        )
    else:
        text = str(value)
    text = " ".join(text.split())
    return shorten(text, limit)


def short_sha(sha: str | None) -> str:
    return (sha or "")[:7]

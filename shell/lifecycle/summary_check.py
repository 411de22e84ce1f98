"""Whether a compaction summary may replace the history: its headings, the exact identifiers of
the recent messages, and the latest user ask, all kept."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from shell import prompts
from shell.lifecycle.rule_summary import grounded_text
from shell.lifecycle.transcript import render_transcript
from shell.text import shorten
from shell.text.identifiers import extract_identifiers
from shell.text.stop_words import STOP_WORDS

ASK_OVERLAP = 0.3


_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_'-]*")


def _words(text: str) -> set[str]:
    return {w.lower().strip("'") for w in _WORD.findall(text)} - STOP_WORDS


def ask_reflected(summary: str, ask: str) -> bool:
    """Whether the summary reflects the ask: ≥30% of its words, or all its distinctive words."""
    ask_words = _words(ask)
    if not ask_words:
        return True
    summary_words = _words(summary)
    if len(ask_words & summary_words) / len(ask_words) >= ASK_OVERLAP:
        return True
    distinctive = {w for w in ask_words if len(w) >= 7 or any(ch.isdigit() for ch in w)}
    return bool(distinctive) and distinctive <= summary_words


def _has_heading(summary: str, heading: str) -> bool:
    wanted = heading.strip().lower()
    return any(line.strip().lower().rstrip(":") == wanted for line in summary.splitlines())


def is_unavailable(summary: str) -> bool:
    """An empty summary, or the "summary unavailable" fallback that erases memory."""
    text = summary.strip().lower()
    return not text or "summary unavailable" in text or text.strip(".") in {"unavailable", "n/a"}


def quality_problems(
    summary: str, recent: Sequence[dict[str, Any]], latest_ask: str | None
) -> list[str]:
    """What is wrong with a summary; an empty list means it passes.

    Args:
        summary: The summariser's output.
        recent: The last messages of the summarised part; their identifiers must survive (those
            grounded in the conversation: `rule_summary.grounded_text`).
        latest_ask: The latest user request in the summarised part, if any.
    """
    if is_unavailable(summary):
        return ["the summary is empty or says it is unavailable"]
    problems: list[str] = []
    missing_headings = [h for h in prompts.SUMMARY_HEADINGS if not _has_heading(summary, h)]
    if missing_headings:
        problems.append("missing headings: " + ", ".join(missing_headings))
    identifiers = extract_identifiers(grounded_text(render_transcript(recent)))
    missing_ids = [i for i in identifiers if i not in summary]
    if missing_ids:
        problems.append("identifiers not kept verbatim: " + ", ".join(missing_ids))
    if latest_ask and not ask_reflected(summary, latest_ask):
        problems.append(f"the latest user ask is not reflected: {shorten(latest_ask, 120)!r}")
    return problems

"""The demo summary keeps the commits of memory writes for one compaction only."""

from __future__ import annotations

import json
from typing import Any

from shell import prompts
from shell.lifecycle.rule_summary import MEMORY_COMMITS, summarise
from shell.lifecycle.summary_check import quality_problems
from shell.lifecycle.transcript import render_transcript

FIRST = "0123456789abcdef0123456789abcdef01234567"
SECOND = "89abcdef0123456789abcdef0123456789abcdef"


def saved(call_id: str, fact: str, commit: str) -> list[dict[str, Any]]:
    """A user fact, the memory_append call that saved it, its receipt and the confirmation."""
    function = {"name": "memory_append", "arguments": json.dumps({"text": f"- {fact}"})}
    receipt = {"path": "memory/2026-03-03.md", "appended": 1, "commit": commit}
    return [
        {"role": "user", "content": fact},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": call_id, "type": "function", "function": function}],
        },
        {"role": "tool", "tool_call_id": call_id, "content": json.dumps(receipt)},
        {"role": "assistant", "content": f"Noted — saved (commit {commit[:7]})."},
    ]


def identifiers_section(summary: str) -> list[str]:
    return summary.split(prompts.SUMMARY_HEADINGS[4])[1].strip().splitlines()


def test_memory_commits_are_kept_once_in_their_own_bullet() -> None:
    body = saved("a1", "Ticket PROJ-4101 tracks the login bug", FIRST)

    summary = summarise(render_transcript(body))

    assert quality_problems(summary, body, None) == []
    assert identifiers_section(summary) == [
        "- PROJ-4101, memory/2026-03-03.md",
        f"- {MEMORY_COMMITS}{FIRST}",
    ]


def test_the_next_summary_drops_the_old_commits_and_keeps_the_rest() -> None:
    first = summarise(
        render_transcript(saved("a1", "Ticket PROJ-4101 tracks the login bug", FIRST))
    )
    body = saved("a2", "The staging database runs on db-stage-7:5432", SECOND)

    second = summarise(render_transcript(body), first)

    assert quality_problems(second, body, None) == []
    assert FIRST not in second
    assert identifiers_section(second) == [
        "- PROJ-4101, db-stage-7:5432, memory/2026-03-03.md",
        f"- {MEMORY_COMMITS}{SECOND}",
    ]

"""Helpers for the compaction tests: messages, filler conversations of whole turns, the recent
turn whose identifiers and ask a good summary keeps, and `compact()` run over a history."""

from __future__ import annotations

import itertools
from typing import Any

from shell.context.counter import TokenCounter
from shell.lifecycle.compaction import compact
from shell.lifecycle.transcript import render_transcript
from shell.model import LLM
from shell.text.identifiers import extract_identifiers

COUNTER = TokenCounter()
FILLER = "The deployment discussion went on about queues, retries and dashboards. " * 6


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def call(call_id: str, name: str = "memory_search", args: str = '{"query": "x"}') -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
        ],
    }


def result(call_id: str, text: str, name: str = "memory_search") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": text}


def conversation(turns: int, first: int = 0) -> list[dict[str, Any]]:
    """`turns` turns, each: user, assistant tool call, tool result, assistant answer."""
    messages: list[dict[str, Any]] = []
    for n in range(first, first + turns):
        messages += [
            user(f"Question {n}: {FILLER}"),
            call(f"c{n}"),
            result(f"c{n}", f"result {n}: {FILLER}"),
            assistant(f"Answer {n}: {FILLER}"),
        ]
    return messages


RECENT = [
    user("Deploy is failing with E4012 on db.internal:5432, ticket OPS-4471."),
    call("q", args='{"query": "OPS-4471"}'),
    result("q", "memory/2026-03-01.md#L3: rollback commit 9f3ab21c at 14:30"),
    assistant("Logs are in /var/log/deploy.log; see https://status.example.com/incidents/7"),
]
IDENTIFIERS = extract_identifiers(render_transcript(RECENT))
ASK = "Can you schedule the database migration rollback for Friday?"


def good_summary(identifiers: list[str] = IDENTIFIERS, ask: str = ASK) -> str:
    return (
        "## Decisions\n- Revert the deploy.\n"
        "## Open TODOs\n- Read the logs.\n"
        "## Constraints/Rules\n- none\n"
        f"## Pending user asks\n- {ask}\n"
        "## Exact identifiers\n" + "\n".join(f"- {i}" for i in identifiers) + "\n"
    )


# --- compact() over a history ---------------------------------------------------------------

SYSTEM_TOKENS = 500


def count_prompt(messages: list[dict[str, Any]]) -> int:
    return SYSTEM_TOKENS + COUNTER.messages(messages)


def history() -> list[dict[str, Any]]:
    """Six filler turns, then the turn with the identifiers and the ask, then two more turns."""
    return [*conversation(6), *RECENT, user(ASK), assistant("I will."), *conversation(2, 6)]


KEEP = COUNTER.messages(conversation(2, 6)) + 5
"""Keeps exactly the last two turns of `history()`."""


async def run(llm: LLM, messages: list[dict[str, Any]], keep: int, **kwargs: Any) -> list[Any]:
    max_transcript_tokens = kwargs.pop("max_transcript_tokens", None)
    max_request_tokens = kwargs.pop("max_request_tokens", None)
    summary_sizes = kwargs.pop("summary_sizes", None)
    ticks = itertools.count(100.0, 0.25)
    items = [
        item
        async for item in compact(
            llm=llm,
            messages=messages,
            counter=COUNTER,
            keep_tail_tokens=keep,
            trigger=kwargs.pop("trigger", "threshold"),
            focus=kwargs.pop("focus", None),
            count_prompt=count_prompt,
            compaction_count=kwargs.pop("compaction_count", 0),
            clock=lambda: next(ticks),
            max_transcript_tokens=max_transcript_tokens,
            max_request_tokens=max_request_tokens,
            summary_sizes=summary_sizes,
        )
    ]
    return items


def user_prompt(request: dict[str, Any]) -> str:
    return str(request["messages"][-1]["content"])

"""The flush by rule: what the user told, kept when a small model's flush stored nothing.

Small local models answer the flush with NO_REPLY or chat and store nothing (Qwen2.5-Coder-1.5B
and SmolLM2 in every flush of `bench/real_server`), so what was told without "remember" (the
release train, the gateway, the backup bucket) was gone at the next compaction. As compaction
falls back on a summary by rule, the flush falls back on the user's own words when Cairn helps
the model with memory (`memory_assist`): the durable facts of each user message the flush saw
(`shell.text.user_facts.durable_facts`), appended in one call Cairn makes through the same
pinned tool. Its card says "by Cairn"; facts the note holds already (as the door would write
them, redacted; in any case, with or without a full stop) are left out, and make no call at all.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from shell.events import Event, MemoryWritten
from shell.lifecycle.flush import FlushOutcome
from shell.loop.assist import cairn_call
from shell.loop.calls import ToolDone, run_tool_calls
from shell.memory.lines import same_line
from shell.messages import is_summary_message
from shell.secrets.door import redacted
from shell.text.user_facts import durable_facts
from shell.tools.toolbox import Tool, Toolbox


def facts_told(messages: Sequence[dict[str, Any]]) -> list[str]:
    """The durable facts of the user's own messages, in order, each once (a compaction
    summary is not the user's words)."""
    facts: list[str] = []
    seen: set[str] = set()
    for message in messages:
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, str):
            continue
        if is_summary_message(message):
            continue
        for fact in durable_facts(content):
            key = " ".join(fact.lower().split())
            if key not in seen:
                seen.add(key)
                facts.append(fact)
    return facts


async def flush_by_rule(
    tool: Tool,
    messages: Sequence[dict[str, Any]],
    note: str,
    *,
    cycle: int,
    timer: Callable[[], float],
) -> AsyncIterator[Event | FlushOutcome]:
    """Append the `facts_told(messages)` that `note` (the target's text) does not hold with
    `tool`; the events of the call, then the outcome ("written" when a line was added, else
    "no_reply": nothing new to keep)."""
    held = {same_line(line) for line in note.splitlines()}
    lines = [f"- {fact}" for fact in facts_told(messages) if same_line(redacted(fact)) not in held]
    if not lines:
        yield FlushOutcome("no_reply")
        return
    text = "\n".join(lines)
    call = cairn_call(tool.name, {"text": text}, cycle)
    added, commit, error = 0, None, None
    async for item in run_tool_calls(Toolbox([tool], timer=timer), [call]):
        if isinstance(item, ToolDone):
            error = item.result.error
            continue
        if isinstance(item, MemoryWritten):
            added, commit = added + item.lines_added, item.commit or commit
        yield item
    if error is not None:
        yield FlushOutcome("failed", error=error)
    else:
        yield FlushOutcome("written" if added else "no_reply", added, commit)

"""What an ACP client is shown of Cairn's events (`session/update`).

A reply streams as `agent_message_chunk`s; a tool call is a `tool_call` then its
`tool_call_update` (completed or failed, with its result); what the memory does (a write, a
search, the flush, a compaction, re-injected rules, a redaction, a notice) has no kind of its own
in the protocol, so it is one line of the agent's thought (`agent_thought_chunk`), as Toad and Zed
show reasoning. Everything else (the meter, the gate's every decision, index progress) is left
out: a client has nowhere to show it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from shell.events import (
    AssistantMessage,
    CompactionFailed,
    CompactionFinished,
    ContextReinjected,
    Error,
    Event,
    FlushFinished,
    FlushStarted,
    MemoryWritten,
    Notice,
    SearchPerformed,
    SecretsRedacted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolCallStopped,
    TurnsDropped,
)
from shell.text import counted, short_sha

if TYPE_CHECKING:
    from acp.schema import (
        AgentMessageChunk,
        AgentThoughtChunk,
        ToolCallProgress,
        ToolCallStart,
        ToolCallStatus,
        ToolKind,
    )

    Update = AgentMessageChunk | AgentThoughtChunk | ToolCallStart | ToolCallProgress

MAX_RESULT_CHARS = 4_000
"""A tool's result as the client shows it; the model still sees it whole."""
KINDS: dict[str, ToolKind] = {
    "memory_search": "search",
    "grep": "search",
    "list_files": "search",
    "memory_get": "read",
    "read_file": "read",
    "read_output": "read",
    "memory_append": "edit",
    "memory_write": "edit",
    "edit_file": "edit",
    "write_file": "edit",
    "run_command": "execute",
}


def updates(event: Event) -> list[Update]:
    """The session updates `event` shows the client (none for most events)."""
    from acp import (
        start_tool_call,
        text_block,
        tool_content,
        update_agent_message_text,
        update_tool_call,
    )

    match event:
        case TextDelta(text=text) if text:
            return [update_agent_message_text(text)]
        case ToolCallStarted(call_id=call_id, name=name, arguments=arguments):
            title = f"{name} {_brief(arguments)}".strip()
            kind = KINDS.get(name, "other")
            return [
                start_tool_call(
                    call_id, title, kind=kind, status="in_progress", raw_input=arguments
                )
            ]
        case ToolCallFinished(call_id=call_id, result=result, error=error):
            shown = result if len(result) <= MAX_RESULT_CHARS else result[:MAX_RESULT_CHARS] + "…"
            status: ToolCallStatus = "failed" if error else "completed"
            content = [tool_content(text_block(shown))]
            return [update_tool_call(call_id, status=status, content=content, raw_output=result)]
        case ToolCallStopped(call_id=call_id):
            return [
                update_tool_call(
                    call_id, status="failed", content=[tool_content(text_block("stopped"))]
                )
            ]
    line = thought(event)
    return [_thought(line)] if line else []


def thought(event: Event) -> str | None:
    """One line for what the memory did, as the agent's thought; None for the rest."""
    match event:
        case MemoryWritten(path=path, commit=commit, lines_added=added, reason=reason):
            if not commit:
                return f"memory: {path} unchanged ({event.commit_error or 'nothing new'})"
            lines = counted(added, "line")
            return f"memory: {path} written ({reason}, +{lines}) → {short_sha(commit)}"
        case SearchPerformed(query=query, hits=hits, nothing_relevant=nothing):
            found = (
                "nothing relevant"
                if nothing or not hits
                else f"{counted(len(hits), 'hit')}, best {hits[0].citation}"
            )
            return f"memory search {query!r}: {found}"
        case FlushStarted(target=target):
            return f"memory flush: saving what matters to {target} before the context is compacted"
        case FlushFinished(outcome=outcome, lines=lines, commit=commit, error=error):
            where = f" → {short_sha(commit)}" if commit else ""
            return f"memory flush {outcome}: {counted(lines, 'line')}{where}" + (
                f" ({error})" if error else ""
            )
        case CompactionFinished(tokens_before=before, tokens_after=after, turns_summarised=turns):
            return f"compacted: {before:,} → {after:,} tokens, {counted(turns, 'turn')} summarised"
        case CompactionFailed(reason=reason):
            return f"compaction failed: {reason}"
        case TurnsDropped(turns=turns):
            dropped = counted(turns, "old turn")
            return f"{dropped} left the context to fit the window (kept in the session)"
        case ContextReinjected(sections=sections):
            return f"rules re-injected after compaction: {', '.join(sections)}"
        case SecretsRedacted(path=path, kinds=kinds):
            return f"redacted {', '.join(kinds)} before writing {path}"
        case Notice(message=message) | Error(message=message):
            return message
        case AssistantMessage():
            return None
    return None


def _thought(line: str) -> AgentThoughtChunk:
    from acp import update_agent_thought_text

    return update_agent_thought_text(line + "\n")


def _brief(arguments: dict[str, Any]) -> str:
    """The arguments a title names: a path, a query, a command; else nothing."""
    for key in ("path", "query", "command", "pattern", "glob"):
        if isinstance(value := arguments.get(key), str) and value:
            return value if len(value) <= 80 else value[:80] + "…"
    return ""

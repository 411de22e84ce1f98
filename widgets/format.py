"""Small text formatters shared by the widgets (token counts, durations, one-line args)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from shell.events import (
    ContextReport,
    HelpShown,
    McpServerInfo,
    SyncStatusChanged,
    TurnCancelled,
    TurnsDropped,
)
from shell.text import counted, short_sha, shorten


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


def context_lines(report: ContextReport) -> list[str]:
    """`/context` as lines: the prompt and its count, the thresholds, the bootstrap and its cuts."""
    usage = report.usage
    parts = " + ".join(f"{name} {tokens(count)}" for name, count in usage.breakdown.items())
    if usage.calibrated and usage.reported_prompt_tokens:
        counted = (
            f"calibrated by the provider: it counted {usage.reported_prompt_tokens:,} for the "
            f"last call; our own count now {usage.counted_prompt_tokens:,}"
        )
    elif usage.calibrated:
        counted = (
            "calibrated by the provider's reports for this model in earlier sessions; "
            f"our own count now {usage.counted_prompt_tokens:,}"
        )
    else:
        counted = "our own count (the provider has not reported usage yet)"
    lines = [
        f"prompt {usage.prompt_tokens:,} of {usage.window:,} tokens "
        f"({usage.window_source}) · {counted}",
        f"  {parts} · {report.messages} messages · {report.compactions} compactions",
        f"  flush at {usage.flush_threshold:,} · compaction at {usage.compaction_threshold:,}",
        f"  tool schemas: {'compact (small window)' if report.compact_tools else 'full'}",
        f"  bootstrap budget: {report.bootstrap_file_budget:,} chars a file, "
        f"{report.bootstrap_total_budget:,} in all",
    ]
    for name, chars in report.bootstrap_chars.items():
        if (full := report.bootstrap_cut.get(name)) is not None:
            lines.append(
                f"  {name}: {chars:,} of {full:,} chars in the prompt; the rest is left out, "
                f'read it with memory_get("{name}")'
            )
        else:
            lines.append(f"  {name}: {chars:,} chars in the prompt")
    for name, full in report.bootstrap_cut.items():
        if name not in report.bootstrap_chars:
            lines.append(f'  {name}: left out ({full:,} chars); read it with memory_get("{name}")')
    return lines


def dropped_text(event: TurnsDropped) -> str:
    flushed = "flushed to today's note" if event.flushed else "not flushed this cycle"
    return (
        f"context full: the oldest {event.turns} turns ({event.messages} messages) left the "
        f"context, {tokens(event.tokens_before)} → {tokens(event.tokens_after)} of "
        f"{tokens(event.window)} tokens; they stay in the session file ({flushed})"
    )


_STOPPED_DURING = {
    "model_call": "the answer was cut off and not kept",
    "tool_calls": "the tool under way finished first",
    "memory_lifecycle": "the memory flush under way finished first",
}


def cancel_receipt(event: TurnCancelled) -> str:
    """A cancelled turn's receipt: "turn cancelled: the tool under way finished first; done:
    memory_append; not run: memory_search; written: memory/2026-11-30.md → 1a2b3c4"."""
    stopped = _STOPPED_DURING[event.stopped_during]
    if event.stopped_during == "tool_calls" and not event.tools_finished:
        stopped = "before any tool ran"
    parts = [f"turn cancelled: {stopped}"]
    if event.tools_finished:
        parts.append("done: " + ", ".join(event.tools_finished))
    if event.tools_stopped:
        parts.append("not run: " + ", ".join(event.tools_stopped))
    if event.written:
        commits = ", ".join(short_sha(c) for c in event.commits)
        parts.append("written: " + ", ".join(event.written) + (f" → {commits}" if commits else ""))
    return "; ".join(parts)


def help_lines(event: HelpShown) -> list[str]:
    """`/help` as lines: each command with its arguments, what it does, and its key."""
    width = max((len(f"{c.name} {c.args}".strip()) for c in event.commands), default=0)
    lines = []
    for command in event.commands:
        usage = f"{command.name} {command.args}".strip()
        key = f"  ({key_name(command.key)})" if command.key else ""
        lines.append(f"{usage.ljust(width)}  {command.help}{key}")
    return lines


def key_name(key: str) -> str:
    """A Textual key as the footer writes it: "f3" is F3, "ctrl+l" stays."""
    return key.upper() if key[:1] == "f" and key[1:].isdigit() else key


def mcp_notice(server: McpServerInfo) -> tuple[str, str]:
    """(text, level) of an MCP server's change: ready is a quiet line, a failure or a stop a
    warning that says why."""
    detail = f": {server.detail}" if server.detail else ""
    match server.state:
        case "ready":
            return f"mcp {server.name}: {counted(len(server.tools), 'tool')}", "info"
        case "starting":
            return f"mcp {server.name}: starting ({server.transport})", "info"
        case "failed":
            return f"mcp {server.name} failed{detail}; its tools are not offered", "warning"
        case _:
            return f"mcp {server.name} stopped{detail}; its tools are no longer offered", "warning"


def sync_state(event: SyncStatusChanged, now: datetime, *, short: bool = False) -> str:
    """The status line's sync slot: "synced 2 min ago", "3 to push", "offline", "1 conflict";
    `short` for narrow status lines: "⇅ 2m", "⇅ 3↑", "⇅ off", "⇅ 1!"."""
    if event.remote is None:
        return ""
    if conflicts := len(event.conflicts):
        return f"⇅ {conflicts}!" if short else f"⇅ {counted(conflicts, 'conflict')}"
    if event.offline:
        return "⇅ off" if short else "⇅ offline"
    if event.ahead:
        return f"⇅ {event.ahead}↑" if short else f"⇅ {event.ahead} to push"
    if event.last_sync is None:
        return "⇅ —" if short else "⇅ not synced"
    minutes = int((now - datetime.fromisoformat(event.last_sync)).total_seconds() // 60)
    if minutes < 1:
        return "⇅ now" if short else "⇅ synced just now"
    if not short:
        return f"⇅ synced {minutes} min ago"
    if minutes < 60:
        return f"⇅ {minutes}m"
    return f"⇅ {minutes // 60}h" if minutes < 48 * 60 else f"⇅ {minutes // 1440}d"

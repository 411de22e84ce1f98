"""The transcript the summariser reads: each message as plain lines, long tool results trimmed
to head and tail."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from shell.messages import content_text
from shell.text import trim_middle

TOOL_RESULT_CHARS = 1500
"""Tool results longer than this are shown to the summariser as head + tail."""


def render_message(message: dict[str, Any], tool_names: dict[str, str] | None = None) -> str:
    """One message as plain transcript lines ("User: …", "Tool memory_search → …")."""
    role = message.get("role")
    body = content_text(message.get("content")).strip()
    if role == "tool":
        name = message.get("name") or (tool_names or {}).get(message.get("tool_call_id", ""), "")
        return f"Tool {name or 'result'} → {trim_middle(body, TOOL_RESULT_CHARS)}"
    if role == "assistant":
        lines = [f"Assistant: {body}"] if body else []
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            arguments = trim_middle(str(function.get("arguments") or ""), 300)
            lines.append(f"Assistant called {function.get('name', '?')}({arguments})")
        return "\n".join(lines)
    label = {"user": "User", "system": "System"}.get(str(role), str(role).title())
    return f"{label}: {body}"


def render_transcript(messages: Sequence[dict[str, Any]]) -> str:
    """The messages as a plain transcript, long tool results trimmed to head + tail."""
    tool_names = {
        call.get("id", ""): (call.get("function") or {}).get("name", "")
        for m in messages
        for call in m.get("tool_calls") or ()
    }
    rendered = (render_message(m, tool_names) for m in messages)
    return "\n\n".join(r for r in rendered if r)

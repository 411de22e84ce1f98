"""What the offline demo brain reads of a model call (the messages and the tools offered) and
what it plans in reply (text or tool calls). The bottom layer of `shell.demo`: no litellm, no
clock, nothing above it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from shell.messages import field, message_text

__all__ = [
    "CallInfo",
    "DemoReply",
    "PlannedCall",
    "ToolOutcome",
    "field",
    "last_user_index",
    "last_user_text",
    "latest_tool_results",
    "message_text",
    "tool_calls_of",
    "tool_names",
]

# --- reading the call: messages (dicts or litellm Message objects) and tools ------------------


@dataclass(frozen=True)
class CallInfo:
    """A tool call the assistant made earlier in the messages."""

    id: str
    name: str
    arguments: str


def tool_calls_of(message: Any) -> list[CallInfo]:
    """The tool calls an assistant message made (none for other messages)."""
    calls = []
    for call in field(message, "tool_calls") or ():
        function = field(call, "function")
        calls.append(
            CallInfo(
                id=str(field(call, "id") or ""),
                name=str(field(function, "name") or ""),
                arguments=str(field(function, "arguments") or ""),
            )
        )
    return calls


def offers_scope(tools: Sequence[Any] | None, name: str = "memory_append") -> bool:
    """Whether the tool `name` takes a memory `scope` (a project is open: `shell.scopes`)."""
    for tool in tools or ():
        function = field(tool, "function")
        if field(function, "name") == name:
            properties = field(field(function, "parameters"), "properties")
            return isinstance(properties, dict) and "scope" in properties
    return False


def tool_names(tools: Sequence[Any] | None) -> set[str]:
    """Names of the function tools offered to the model."""
    names = set()
    for tool in tools or ():
        if isinstance(name := field(field(tool, "function"), "name"), str):
            names.add(name)
    return names


def last_user_index(messages: Sequence[Any]) -> int:
    """Index of the last user message, -1 when there is none."""
    for index in range(len(messages) - 1, -1, -1):
        if field(messages[index], "role") == "user":
            return index
    return -1


def last_user_text(messages: Sequence[Any]) -> str:
    """The last user message's text, stripped; empty when there is none."""
    index = last_user_index(messages)
    return message_text(messages[index]).strip() if index >= 0 else ""


@dataclass(frozen=True)
class ToolOutcome:
    """One tool message: the tool's name and what it returned."""

    name: str
    content: str

    @property
    def error(self) -> str | None:
        """The error message when the tool failed ("Error: …"), else None."""
        text = self.content.strip()
        return text.removeprefix("Error:").strip() if text.startswith("Error") else None

    def payload(self) -> dict[str, Any]:
        """The result as a JSON object; empty when it is not one."""
        try:
            value = json.loads(self.content)
        except json.JSONDecodeError:
            return {}
        return value if isinstance(value, dict) else {}


def latest_tool_results(messages: Sequence[Any]) -> list[ToolOutcome]:
    """The trailing tool messages (the last round of calls), in order, each named by its call."""
    names = {call.id: call.name for m in messages for call in tool_calls_of(m)}
    results: list[ToolOutcome] = []
    for message in reversed(messages):
        if field(message, "role") != "tool":
            break
        name = field(message, "name") or names.get(str(field(message, "tool_call_id")), "tool")
        results.append(ToolOutcome(str(name), message_text(message)))
    return results[::-1]


# --- the reply --------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlannedCall:
    """A tool call the demo brain decided to make."""

    name: str
    arguments: dict[str, Any]

    @property
    def arguments_json(self) -> str:
        return json.dumps(self.arguments, ensure_ascii=False)


@dataclass(frozen=True)
class DemoReply:
    """What the demo brain says for one model call: text, or tool calls, never both."""

    text: str = ""
    tool_calls: tuple[PlannedCall, ...] = ()

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if self.tool_calls else "stop"

"""Cairn's offline demo brain as a litellm custom provider for "cairn-demo/brain": the plumbing.

This module reads the messages litellm hands over (dicts or litellm Message objects), counts
usage with tiktoken, and returns the reply whole or streamed as `GenericStreamingChunk`s. What
the brain says is decided in `shell.demo_rules` (turns) and `shell.demo_summary` (compaction
summaries); it needs no API key and no network, and the same input always gives the same output.

`DemoBrain` subclasses `litellm.CustomLLM`, so it only exists once litellm is imported: the
class is built on first access (`from shell.demo import DemoBrain`), which imports litellm.
Importing this module alone does not.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from typing import Any

from shell.compaction import content_text
from shell.context import count_tokens

# --- reading the call: messages (dicts or litellm Message objects) and tools ------------------


def field(item: Any, key: str) -> Any:
    """`item[key]` for a mapping, `item.key` for an object, None when absent."""
    if isinstance(item, Mapping):
        return item.get(key)
    return getattr(item, key, None)


def message_text(message: Any) -> str:
    """A message's content as plain text."""
    return content_text(field(message, "content"))


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
class ToolResult:
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


def latest_tool_results(messages: Sequence[Any]) -> list[ToolResult]:
    """The trailing tool messages (the last round of calls), in order, each named by its call."""
    names = {call.id: call.name for m in messages for call in tool_calls_of(m)}
    results: list[ToolResult] = []
    for message in reversed(messages):
        if field(message, "role") != "tool":
            break
        name = field(message, "name") or names.get(str(field(message, "tool_call_id")), "tool")
        results.append(ToolResult(str(name), message_text(message)))
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


# --- usage and the litellm adapter ------------------------------------------------------------


def prompt_tokens(messages: Sequence[Any], tools: Sequence[Any] | None) -> int:
    """tiktoken count of every message's content, every tool call's arguments, and the tool
    schemas as JSON (`json.dumps(list(tools), sort_keys=True)`), each counted on its own."""
    total = 0
    for message in messages:
        total += count_tokens(message_text(message))
        total += sum(count_tokens(call.arguments) for call in tool_calls_of(message))
    if tools:
        total += count_tokens(json.dumps(list(tools), sort_keys=True))
    return total


def completion_tokens(reply: DemoReply) -> int:
    """tiktoken count of the reply text plus each tool call's arguments JSON."""
    return count_tokens(reply.text) + sum(count_tokens(c.arguments_json) for c in reply.tool_calls)


def usage_of(
    messages: Sequence[Any], tools: Sequence[Any] | None, reply: DemoReply
) -> dict[str, int]:
    prompt, completion = prompt_tokens(messages, tools), completion_tokens(reply)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def call_ids(messages: Sequence[Any], reply: DemoReply) -> list[str]:
    """Deterministic tool call ids, distinct across turns (they hash the conversation)."""
    digest = hashlib.sha256()
    for message in messages:
        digest.update(f"{field(message, 'role')}\0{message_text(message)}\0".encode())
    base = digest.hexdigest()[:12]
    return [f"call_demo_{base}_{index}" for index in range(len(reply.tool_calls))]


def _chunk(
    text: str = "",
    tool_use: dict[str, Any] | None = None,
    finish_reason: str = "",
    usage: dict[str, int] | None = None,
) -> dict[str, Any]:
    return {
        "text": text,
        "tool_use": tool_use,
        "is_finished": bool(finish_reason),
        "finish_reason": finish_reason,
        "usage": usage,
        "index": 0,
    }


def stream_chunks(
    reply: DemoReply, usage: dict[str, int], ids: Sequence[str]
) -> Iterator[dict[str, Any]]:
    """The reply as litellm `GenericStreamingChunk` dicts: text word by word, each tool call's
    arguments in two pieces, then one finished chunk carrying finish_reason and usage."""
    for word in re.findall(r"\s*\S+\s*", reply.text):
        yield _chunk(word)
    for index, (call, call_id) in enumerate(zip(reply.tool_calls, ids, strict=True)):
        arguments = call.arguments_json
        cut = len(arguments) // 2
        for piece, first in ((arguments[:cut], True), (arguments[cut:], False)):
            function = {"name": call.name if first else None, "arguments": piece}
            tool_use = {"id": call_id if first else None, "type": "function", "index": index}
            yield _chunk(tool_use={**tool_use, "function": function})
    yield _chunk(finish_reason=reply.finish_reason, usage=usage)


@lru_cache(maxsize=1)
def _demo_brain_class() -> type:
    import litellm
    from litellm.types.utils import (
        ChatCompletionMessageToolCall,
        Choices,
        Function,
        Message,
        ModelResponse,
        Usage,
    )

    # Imported here, not at the top: the turn rules read messages with this module's helpers.
    from shell.demo_rules import decide

    class DemoBrain(litellm.CustomLLM):  # type: ignore[misc, unused-ignore]
        """The offline demo brain as a litellm custom provider (register it under "cairn-demo").

        Args:
            today: Fallback for today's date when the system prompt states none.
        """

        def __init__(self, today: Callable[[], date] | None = None) -> None:
            super().__init__()
            self.today = today

        def _answer(
            self, messages: list[Any], kwargs: dict[str, Any]
        ) -> tuple[DemoReply, dict[str, int], list[str]]:
            tools = (kwargs.get("optional_params") or {}).get("tools") or []
            reply = decide(messages, tools, today=self.today)
            return reply, usage_of(messages, tools, reply), call_ids(messages, reply)

        def completion(self, model: str, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
            reply, usage, ids = self._answer(messages, kwargs)
            calls = [
                ChatCompletionMessageToolCall(
                    id=call_id,
                    type="function",
                    function=Function(name=call.name, arguments=call.arguments_json),
                )
                for call, call_id in zip(reply.tool_calls, ids, strict=True)
            ]
            message = Message(
                role="assistant", content=reply.text or None, tool_calls=calls or None
            )
            return ModelResponse(
                model=model,
                choices=[Choices(index=0, message=message, finish_reason=reply.finish_reason)],
                usage=Usage(**usage),
            )

        async def acompletion(
            self, model: str, messages: list[Any], *args: Any, **kwargs: Any
        ) -> Any:
            return self.completion(model, messages, *args, **kwargs)

        def streaming(
            self, model: str, messages: list[Any], *args: Any, **kwargs: Any
        ) -> Iterator[Any]:
            reply, usage, ids = self._answer(messages, kwargs)
            yield from stream_chunks(reply, usage, ids)

        async def astreaming(
            self, model: str, messages: list[Any], *args: Any, **kwargs: Any
        ) -> AsyncIterator[Any]:
            reply, usage, ids = self._answer(messages, kwargs)
            for chunk in stream_chunks(reply, usage, ids):
                yield chunk

    return DemoBrain


def __getattr__(name: str) -> Any:
    if name == "DemoBrain":
        return _demo_brain_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

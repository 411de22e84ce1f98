"""Cairn's offline demo brain as a litellm custom provider for "cairn-demo/brain": the plumbing.

This module counts usage with tiktoken and returns the reply whole or streamed as
`GenericStreamingChunk`s. What the brain says is decided in `shell.demo.rules` (turns) and
`shell.demo.summary` (compaction summaries); it needs no API key and no network, and the same
input always gives the same output.

`DemoBrain` subclasses `litellm.CustomLLM`, so it only exists once litellm is imported:
`demo_brain()` builds the class on first call, which imports litellm. Importing this module
alone does not.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from datetime import date
from functools import lru_cache
from typing import Any

from shell.demo.messages import DemoReply, field, message_text, tool_calls_of
from shell.demo.rules import decide
from shell.text.tokens import CONTEXT_ENCODING, count_tokens

# --- usage and the litellm adapter ------------------------------------------------------------


def _count(text: str) -> int:
    return count_tokens(text, CONTEXT_ENCODING)  # the meter's tokenizer: one BPE loaded, not two


def prompt_tokens(messages: Sequence[Any], tools: Sequence[Any] | None) -> int:
    """tiktoken count of every message's content, every tool call's arguments, and the tool
    schemas as JSON (`json.dumps(list(tools), sort_keys=True)`), each counted on its own."""
    total = 0
    for message in messages:
        total += _count(message_text(message))
        total += sum(_count(call.arguments) for call in tool_calls_of(message))
    if tools:
        total += _count(json.dumps(list(tools), sort_keys=True))
    return total


def completion_tokens(reply: DemoReply) -> int:
    """tiktoken count of the reply text plus each tool call's arguments JSON."""
    return _count(reply.text) + sum(_count(c.arguments_json) for c in reply.tool_calls)


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
def demo_brain_class() -> type:
    """The `DemoBrain` class (a `litellm.CustomLLM`); imports litellm on the first call.

    Long only because it is a class body: the class can be defined only after litellm's lazy
    import, and its methods are each short.
    """
    from litellm.llms.custom_llm import CustomLLM
    from litellm.types.utils import (
        ChatCompletionMessageToolCall,
        Choices,
        Function,
        Message,
        ModelResponse,
        Usage,
    )

    class DemoBrain(CustomLLM):  # type: ignore[misc, unused-ignore]
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
                usage=Usage(
                    prompt_tokens=usage["prompt_tokens"],
                    completion_tokens=usage["completion_tokens"],
                    total_tokens=usage["total_tokens"],
                ),
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

        # litellm calls it with keywords; its base declares a bare (*args, **kwargs) signature
        async def astreaming(  # type: ignore[override]
            self, model: str, messages: list[Any], *args: Any, **kwargs: Any
        ) -> AsyncIterator[Any]:
            reply, usage, ids = self._answer(messages, kwargs)
            for chunk in stream_chunks(reply, usage, ids):
                yield chunk

    return DemoBrain


def demo_brain(today: Callable[[], date] | None = None) -> Any:
    """A new demo brain provider, ready for `litellm.custom_provider_map`."""
    return demo_brain_class()(today)

"""Helpers for driving the offline demo brain through real litellm: tools, messages, and `ask`,
which streams a completion and reassembles it with `litellm.stream_chunk_builder`."""

from __future__ import annotations

import json
from typing import Any

from shell import prompts
from shell.config import DEMO_MODEL

SYSTEM = {"role": "system", "content": "You are Cairn.\n\nCurrent date: 2026-03-03"}


def tool(name: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": f"The {name} tool.",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
        },
    }


ALL_TOOLS = [tool("memory_search"), tool("memory_get"), tool("memory_append")]
NO_SEARCH = [tool("memory_get"), tool("memory_append")]


class Answer:
    def __init__(self, chunks: list[Any], full: Any) -> None:
        self.chunks = chunks
        self.message = full.choices[0].message
        self.finish_reason = full.choices[0].finish_reason
        self.usage = full.usage
        self.text = self.message.content or ""
        self.calls = [
            (call.function.name, json.loads(call.function.arguments))
            for call in self.message.tool_calls or ()
        ]
        self.call_ids = [call.id for call in self.message.tool_calls or ()]


async def ask(litellm: Any, messages: list[dict[str, Any]], tools: list[Any] | None) -> Answer:
    extra = {"tools": tools} if tools else {}
    stream = await litellm.acompletion(
        model=DEMO_MODEL,
        messages=messages,
        stream=True,
        stream_options={"include_usage": True},
        **extra,
    )
    chunks = [chunk async for chunk in stream]
    return Answer(chunks, litellm.stream_chunk_builder(chunks, messages=messages))


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def called(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


def result(call_id: str, payload: Any) -> dict[str, Any]:
    content = payload if isinstance(payload, str) else json.dumps(payload)
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def flush_messages(*conversation: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": prompts.flush_system("memory/2026-03-03.md")},
        *conversation,
        user(prompts.flush_prompt("memory/2026-03-03.md", "2026-03-03T16:00")),
    ]

"""Helpers for the model client tests: a request's messages and tools, a client pointed at the
fake server, a stream collected, and backoff delays recorded instead of slept."""

from __future__ import annotations

from typing import Any

from shell.model import LLM
from tests.fakes.openai_server import FakeOpenAI

MESSAGES = [{"role": "user", "content": "hello"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "memory_get",
            "description": "Read a memory file.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        },
    }
]


class Sleeps:
    """Records backoff delays instead of waiting them out."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def make_llm(server: FakeOpenAI, **options: Any) -> LLM:
    options = {"base_delay": 0.01, "jitter": lambda: 1.0, "timeout": 10.0, **options}
    return LLM("openai/fake", api_base=server.base_url, **options)


async def collect(llm: LLM, tools: list[dict[str, Any]] | None = None) -> list[Any]:
    return [item async for item in llm.stream(MESSAGES, tools)]

"""Helpers for driving a real agent in tests: start it, collect its events, pick them by kind."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from shell import events as ev
from shell.agent import Agent
from shell.build import build_agent
from shell.config import Settings
from shell.prompts import SUMMARY_HEADINGS


async def collect(stream: AsyncIterator[ev.BaseEvent]) -> list[ev.BaseEvent]:
    async with contextlib.aclosing(stream) as events:
        return [event async for event in events]


async def started(settings: Settings) -> Agent:
    agent = build_agent(settings)
    await collect(agent.start())
    return agent


def of(events: list[ev.BaseEvent], kind: type[ev.BaseEvent]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def summary_text(*extra: str) -> str:
    return "\n".join(f"{h}\n- {' '.join(extra) or 'none'}" for h in SUMMARY_HEADINGS)


def memory_tools_offered() -> dict[str, list[str]]:
    """The memory tools a turn offers, each with its parameters in order (`Offered`), as the
    real schemas declare them."""
    from shell.memory.search.tool import parameters_schema
    from shell.memory.tools import APPEND_SCHEMA, GET_SCHEMA, WRITE_SCHEMA

    schemas = {
        "memory_search": parameters_schema(),
        "memory_get": GET_SCHEMA,
        "memory_append": APPEND_SCHEMA,
        "memory_write": WRITE_SCHEMA,
    }
    return {name: list(schema["properties"]) for name, schema in schemas.items()}

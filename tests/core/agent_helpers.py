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

"""Merging async streams that never end (the background events of a session)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TypeVar

T = TypeVar("T")


async def merged(*streams: AsyncIterator[T]) -> AsyncIterator[T]:
    """The items of every stream as they come, until the consumer stops listening."""
    queue: asyncio.Queue[T] = asyncio.Queue()

    async def forward(stream: AsyncIterator[T]) -> None:
        async for item in stream:
            queue.put_nowait(item)

    tasks = [asyncio.create_task(forward(stream)) for stream in streams]
    try:
        while True:
            yield await queue.get()
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

"""Background syncs report in the order they ran: a sync asked for while another re-indexes and
reports waits for that report, so the last status on the queue is the newest."""

from __future__ import annotations

import asyncio

import pytest

from shell.events import Event
from shell.events.sync import SyncEvent, SyncFinished
from shell.sync.service import SyncService
from tests.sync.conftest import DAY, Machine


async def test_a_sync_begins_only_after_the_one_before_it_is_reported(
    pair: tuple[Machine, Machine], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = pair
    b.append(DAY, "- written on b")
    assert isinstance(b.engine.sync()[-1], SyncFinished)

    def pulled(changed: list[str]) -> list[Event]:
        service.committed("a write while the pull re-indexes")  # asks for the next sync
        return []

    service = SyncService(
        a.root,
        remote=None,
        author_name="T",
        author_email="t@example.org",
        push_delay=0.0,
        reindex=pulled,
    )
    loop = asyncio.get_running_loop()
    reported: list[Event] = []
    finished_when_begun: list[int] = []
    real_sync = service.engine.sync

    async def take_reported() -> None:
        reported.extend(service.drain())

    def observed_sync() -> list[SyncEvent]:
        asyncio.run_coroutine_threadsafe(take_reported(), loop).result()
        finished_when_begun.append(sum(isinstance(e, SyncFinished) for e in reported))
        return real_sync()

    monkeypatch.setattr(service.engine, "sync", observed_sync)

    async def two_syncs_reported() -> None:
        async for event in service.events():
            reported.append(event)
            if sum(isinstance(e, SyncFinished) for e in reported) == 2:
                return

    service.start()
    await asyncio.wait_for(two_syncs_reported(), 60)
    await service.aclose()

    assert finished_when_begun == [0, 1]  # the second began after the first's report
    first, second = [e for e in reported if isinstance(e, SyncFinished)]
    assert DAY in first.changed and not second.changed

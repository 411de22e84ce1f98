"""A full disk mid-session (ENOSPC from every durable write, from a chosen moment): the turn ends
with an error event and a `turn_finished`, and what was committed before stays committed."""

from __future__ import annotations

import errno
import io
import json
from pathlib import Path

import pytest

from shell import events as ev
from shell import fsio
from shell.config import Settings
from shell.headless.run import run_headless
from tests.core.agent_helpers import started
from tests.fakes.openai_script import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.git_read import commit


def disk_full(monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on every durable write (`shell.fsio.write_atomically`, whoever imported it)
    fails as a full disk does, before anything is written."""

    def full(path: Path, mode: int) -> tuple[int, Path]:
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(fsio, "_create_temp", full)


async def test_a_disk_that_fills_mid_turn_ends_the_turn_with_an_error(
    fake_settings: Settings, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = await started(fake_settings)
    fake_openai.enqueue(
        Reply(
            tool_calls=[
                ("c1", "memory_append", '{"text": "- Deploy window is Friday 14:00"}'),
                ("c2", "memory_append", '{"text": "- Tom takes his coffee black"}'),
            ]
        ),
        Reply(text="Saved."),
    )
    events: list[ev.BaseEvent] = []
    async for event in agent.submit("remember the deploy window and Tom's coffee"):
        events.append(event)
        if isinstance(event, ev.MemoryWritten) and event.commit:
            disk_full(monkeypatch)
    assert events[-1] == ev.TurnFinished(turn=1, reason="error")
    (error,) = [e for e in events if isinstance(e, ev.Error)]
    assert error.kind == "storage" and "could not write to disk" in error.message
    first, second = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert first.error is None and second.error and "No space left" in second.error
    note = (fake_settings.workspace / "memory/2026-11-30.md").read_text()
    assert "Deploy window is Friday 14:00" in note and "Tom takes" not in note
    assert "memory(tool): append 1 line" in commit(fake_settings.workspace).message
    await agent.aclose()


class FillsAfterAWrite(io.StringIO):
    """`cairn run`'s stdout, which fills the disk once a memory write was committed."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        super().__init__()
        self.monkeypatch = monkeypatch

    def write(self, text: str) -> int:
        if '"type": "memory_written"' in text and '"commit": null' not in text:
            disk_full(self.monkeypatch)
        return super().write(text)


async def test_cairn_run_on_a_disk_that_fills_ends_each_turn_and_exits_with_an_error(
    fake_settings: Settings, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_openai.enqueue(
        Reply(tool_calls=[("c1", "memory_append", '{"text": "- Deploy window is Friday"}')]),
        Reply(text="Saved."),
        Reply(text="Still here."),
    )
    out = FillsAfterAWrite(monkeypatch)
    code = await run_headless(fake_settings, ["remember the deploy window", "and now?"], out=out)

    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    finished = [line for line in lines if line["type"] == "turn_finished"]
    assert [f["reason"] for f in finished] == ["error", "error"]
    assert [line["kind"] for line in lines if line["type"] == "error"] == ["storage", "storage"]
    assert code == 1
    assert "memory(tool): append 1 line" in commit(fake_settings.workspace).message

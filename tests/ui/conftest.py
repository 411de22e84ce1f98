"""UI test fixtures: a fixed workspace, no cursor blink, helpers that let a turn finish."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from widgets.app import CairnApp
from widgets.prompt import Prompt


@pytest.fixture(autouse=True)
def no_cursor_blink(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Prompt, "CURSOR_BLINK", False)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


async def settle(app: CairnApp, pilot: Pilot[None]) -> None:
    """Wait for the running agent stream to end and its events to be routed and painted."""
    if running := [w for w in app.workers if w.group == "agent"]:  # none: wait_for_complete
        await app.workers.wait_for_complete(running)  # would wait for every worker, forever
    await pilot.pause()
    await pilot.pause()


async def started(app: CairnApp, pilot: Pilot[None]) -> None:
    """Wait until a real agent's start has ended (it loads in worker threads), then settle."""
    for _ in range(600):
        if not app.busy:
            break
        await pilot.pause(0.05)
    await settle(app, pilot)


async def send(app: CairnApp, pilot: Pilot[None], text: str, *, typed: bool = False) -> None:
    """Put `text` in the prompt (key by key when `typed`; each key press costs an idle wait),
    press Enter, and wait for the turn to finish."""
    if typed:
        await pilot.press(*text)
    else:
        app.prompt.value = text
    await pilot.press("enter")
    await settle(app, pilot)


async def until(pilot: Pilot[None], condition: Callable[[], bool], steps: int = 100) -> None:
    """Let the app run until `condition` holds (a bounded number of idle steps, not a timer)."""
    for _ in range(steps):
        if condition():
            return
        await pilot.pause()
    raise AssertionError("condition never became true")

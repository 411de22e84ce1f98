"""UI test fixtures: the app on the real core (the demo brain, a fixed clock, timer, git
identity and session id), a workspace, no cursor blink, and helpers that let a turn finish."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from shell.build import build_agent
from shell.config import DEMO_MODEL, Settings
from tests.conftest import Clock
from widgets.app import CairnApp
from widgets.keyguard import KeyGuard
from widgets.prompt import Prompt

MakeApp = Callable[..., CairnApp]


class Ticks:
    """A timer that moves 12 ms each time it is read: durations on screen are the same on
    every run."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 0.012
        return self.now


def demo_settings(workspace: Path, **changes: Any) -> Settings:
    """The demo brain in `workspace`, deterministic: fixed clock, timer and session id; the
    hash embedder; no file watching."""
    settings = Settings(
        workspace=workspace,
        model=DEMO_MODEL,
        embedder="hash",
        watch=False,
        clock=Clock(),
        timer=Ticks(),
        session_token=lambda: "000001",
        git_author_email="cairn@localhost",  # the default names this host: shas would vary by host
    )
    return replace(settings, **changes)


@pytest.fixture(autouse=True)
def no_cursor_blink(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Prompt, "CURSOR_BLINK", False)


@pytest.fixture(autouse=True)
def no_approval_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keys answer an approval at once, except in the tests of the guard (a fake clock)."""
    monkeypatch.setattr(KeyGuard, "SECONDS", 0.0)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def demo_app(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> MakeApp:
    """Make the app on the real core with the demo brain. The workspace is given relative to
    the working folder, so what the screen shows of its path is the same on every run; the
    index syncs when a search needs it, in the turn's own stream, never in the background."""
    monkeypatch.chdir(workspace.parent)

    def make(
        *,
        trace: Path | None = None,
        theme_dir: Path | None = None,
        resume: bool = False,
        **changes: Any,
    ) -> CairnApp:
        """`changes` to the settings; `trace` and `theme_dir` for the app; `resume` the latest
        session."""
        settings = demo_settings(Path(workspace.name), **changes)
        agent = build_agent(settings, resume=resume, index_in_background=False)
        return CairnApp(agent, trace=trace, theme_dir=theme_dir)

    return make


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

"""The TUI's `--trace` holds what every event file on disk holds: the redacted form."""

from __future__ import annotations

from pathlib import Path

from shell.events import TurnStarted, from_json
from tests.ui.conftest import MakeApp, send, started

TOKEN = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"


async def test_a_token_typed_in_the_tui_is_redacted_in_its_trace(
    demo_app: MakeApp, workspace: Path
) -> None:
    trace = workspace / ".cairn" / "traces" / "t.jsonl"
    app = demo_app(trace=trace)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        await send(app, pilot, f"my deploy token is {TOKEN}")

    text = trace.read_text(encoding="utf-8")
    assert TOKEN not in text
    [turn] = [e for e in map(from_json, text.splitlines()) if isinstance(e, TurnStarted)]
    assert turn.prompt == "my deploy token is [REDACTED GitHub Token]"

"""`--resume` rebuilds the view: the earlier turns with their cards, flush blocks and receipts,
the compaction counter and the gate log come back, above a mark, before the live session."""

from __future__ import annotations

from tests.ui.conftest import MakeApp, send, started
from tests.ui.pilot_helpers import ASKED, CHAT, SIZE, TOLD, painted


async def test_resume_shows_the_earlier_turns_counters_and_gate_log(demo_app: MakeApp) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        for prompt in (TOLD, ASKED, *CHAT, "/compact"):
            await send(app, pilot, prompt)
        before = app.transcript.describe()
        compactions = app.status_bar.compactions.count
        gates = list(app.side_panes.decisions)
    assert compactions >= 1 and gates

    resumed = demo_app(resume=True)
    async with resumed.run_test(size=SIZE) as pilot:
        await started(resumed, pilot)
        view = resumed.transcript.describe()
        assert f"user: {TOLD}" in view and f"user: {ASKED}" in view
        assert "memory_append" in view and "memory_search" in view
        assert "flush:" in view
        assert "— resumed session" in view
        assert view.index(f"user: {ASKED}") < view.index("— resumed session")
        assert resumed.status_bar.compactions.count == compactions
        assert resumed.side_panes.decisions == gates
        assert "no gate decisions yet" not in painted(resumed.side_panes.gate_log)
        await send(resumed, pilot, "where does my sister live?")
        assert resumed.transcript.describe().startswith(view)
    assert before

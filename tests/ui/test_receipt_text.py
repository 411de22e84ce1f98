"""The compaction receipt on screen, on the real core with the demo brain: its summary shows one
blank line between sections, and the flush before it says "nothing to save" for the compaction
the receipt counts, never the raw NO_REPLY token."""

from __future__ import annotations

from textual.widgets import Collapsible

from tests.ui.conftest import MakeApp, send, settle, started
from tests.ui.pilot_helpers import ASKED, DAILY, SIZE, TOLD
from widgets.cards.blocks import CompactionReceipt
from widgets.cards.prose import Prose

CHAT = (
    "My sister lives in Tromsø.",
    "The build server is ci-7.internal.",
    "Priya leads the billing migration.",
    "where does my sister live?",
)


async def test_the_receipt_summary_keeps_one_blank_line_between_sections(
    demo_app: MakeApp,
) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        for prompt in (TOLD, ASKED, *CHAT, "/compact"):
            await send(app, pilot, prompt)
        receipt = app.query_one(CompactionReceipt)
        receipt.query_one(Collapsible).collapsed = False
        await settle(app, pilot)

        transcript = app.transcript.describe()
        assert "flush: nothing to save (before compaction #1)" in transcript
        assert "NO_REPLY" not in transcript
        assert receipt.border_title == "compaction #1"
        summary = receipt.query_one(Prose)
        rows = [line.content.plain.rstrip() for line in summary.lines(summary.size.width)]
        titles = [line[3:] for line in summary.source.splitlines() if line.startswith("## ")]
        at = [rows.index(title) for title in titles]
        assert len(at) == 5
        for index in at[1:]:
            assert rows[index - 1] == "" and rows[index - 2] != ""  # one blank line
        for index in at:
            assert rows[index + 1] != ""  # no blank under a heading


async def test_an_outside_edit_shows_as_its_own_commit(demo_app: MakeApp) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await send(app, pilot, TOLD)
        note = app.agent.settings.workspace / DAILY
        note.write_text(note.read_text() + "- typed in another shell\n")
        await send(app, pilot, "remember that the printer is on floor 2")

        lines = [line for line in app.transcript.describe().splitlines() if line.startswith("✎ ")]
        assert len(lines) == 3
        assert lines[1].startswith(f"✎ {DAILY}  +1 line  edit made outside Cairn  → ")
        assert "(tool)" in lines[2] and "outside" not in lines[2]

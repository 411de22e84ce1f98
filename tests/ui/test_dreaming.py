"""Dreaming in the TUI, on the real core (the demo brain, real git, the index): /dream's block,
the review screen's keys, and what each decision shows in the panes, the status line and the
git log."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Label, OptionList

from shell.config import DreamSettings
from shell.dreaming import Decision
from shell.events import Event
from tests.conftest import FIXED_NOW
from tests.ui.conftest import MakeApp, send, settle, started, until
from widgets.app import CairnApp
from widgets.cards.dream_block import DreamBlock
from widgets.panes.memory import MemoryFilePane
from widgets.screens.dream_review import DreamReview

TODAY = FIXED_NOW.date().isoformat()
QUESTIONS = [
    "how does Tom take his coffee?",
    "what coffee does Tom drink?",
    "does Tom want milk in his coffee?",
    "what is Tom's coffee order?",
]
BILLING_QUESTIONS = [
    "who leads billing?",
    "does Priya lead billing?",
    "is Priya in charge of billing?",
    "who heads billing?",
]
SIZE = (120, 40)


async def asked_four_ways(
    app: CairnApp, pilot: Pilot[None], fact: str = "Tom takes his coffee black"
) -> None:
    await started(app, pilot)
    await send(app, pilot, f"remember that {fact}")
    for question in QUESTIONS:
        await send(app, pilot, question)


def pane(app: CairnApp, name: str) -> MemoryFilePane:
    return app.query_one(f"#pane-{name}", MemoryFilePane)


def commits(workspace: Path) -> list[str]:
    log = subprocess.run(
        ["git", "-C", str(workspace), "log", "--format=%s"], capture_output=True, text=True
    )
    return log.stdout.splitlines()


async def test_dream_shows_its_block_and_the_review_accepts_one_line(
    demo_app: MakeApp, workspace: Path
) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await asked_four_ways(app, pilot)
        await send(app, pilot, "/dream")

        (block,) = app.query(DreamBlock)
        text = block.describe()
        assert "light" in text and "REM" in text and "deep" in text
        assert "add: Tom takes his coffee black." in text
        assert "1 proposal to review: F3 or /review" in text
        review = app.query_one("#status-review", Label)
        assert str(review.render()) == "💭 1 to review" and not review.has_class("-idle")
        await until(pilot, lambda: "· add · open" in pane(app, "dreams").text)
        assert f"memory/{TODAY}.md#L1" in pane(app, "dreams").text
        before = commits(workspace)

        await pilot.press("f3")
        await until(pilot, lambda: isinstance(app.screen, DreamReview))
        screen = app.screen
        assert isinstance(screen, DreamReview)
        detail = str(screen.query_one("#review-text").render())
        assert "Tom takes his coffee black." in detail
        assert f"from memory/{TODAY}.md#L1 ({TODAY})" in detail
        assert f"+  - Tom takes his coffee black. — Source: memory/{TODAY}.md#L1" in detail

        await pilot.press("a")
        await until(pilot, lambda: not isinstance(app.screen, DreamReview))
        await settle(app, pilot)
        after = commits(workspace)
        assert len(after) == len(before) + 1
        assert after[0].startswith("memory(dream): accept d-")
        assert after[0].endswith(f"from memory/{TODAY}.md#L1")
        await until(
            pilot, lambda: "Tom takes his coffee black. — Source:" in pane(app, "memory").text
        )
        assert "· add · accepted" in pane(app, "dreams").text
        assert review.has_class("-idle")
        git_log = app.query_one("#git-log")
        await until(
            pilot,
            lambda: "memory(dream): accept" in str(git_log.query_one(".git-log--body").render()),
        )
        assert "accepted d-" in app.transcript.describe()


async def test_a_rejection_in_the_review_does_not_come_back(
    demo_app: MakeApp, workspace: Path
) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await asked_four_ways(app, pilot)
        await send(app, pilot, "/dream")
        memory = (workspace / "MEMORY.md").read_text()
        await send(app, pilot, "/review")
        await until(pilot, lambda: isinstance(app.screen, DreamReview))
        await pilot.press("r")
        await until(pilot, lambda: not isinstance(app.screen, DreamReview))
        await settle(app, pilot)
        assert (workspace / "MEMORY.md").read_text() == memory
        await until(pilot, lambda: "· add · rejected" in pane(app, "dreams").text)
        assert commits(workspace)[0].startswith("memory(dream): reject d-")

        await send(app, pilot, QUESTIONS[0])
        await send(app, pilot, "/dream")
        assert "+ d-" not in app.query(DreamBlock).last().describe()
        assert "rejected before" in app.query(DreamBlock).last().describe()


async def test_an_edit_in_the_review_is_what_memory_md_gets(
    demo_app: MakeApp, workspace: Path
) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await asked_four_ways(app, pilot)
        await send(app, pilot, "/dream")
        await pilot.press("f3")
        await until(pilot, lambda: isinstance(app.screen, DreamReview))
        await pilot.press("e")
        editor = app.screen.query_one("#review-edit", Input)
        assert editor.has_focus and editor.value == "Tom takes his coffee black."
        editor.value = ""
        await pilot.press(*"Tom drinks black coffee", "enter")
        await until(pilot, lambda: not isinstance(app.screen, DreamReview))
        await settle(app, pilot)
        assert "- Tom drinks black coffee — Source:" in (workspace / "MEMORY.md").read_text()


async def test_escape_leaves_the_review_and_decides_nothing(
    demo_app: MakeApp, workspace: Path
) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await asked_four_ways(app, pilot)
        await send(app, pilot, "/dream")
        before = commits(workspace)
        await pilot.press("f3")
        await until(pilot, lambda: isinstance(app.screen, DreamReview))
        await pilot.press("e", "escape")  # the first esc leaves the edit, the second the screen
        assert isinstance(app.screen, DreamReview)
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, DreamReview))
        assert commits(workspace) == before
        assert app.prompt.has_focus


async def test_accept_all_takes_every_proposal_in_its_own_commit(
    demo_app: MakeApp, workspace: Path
) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await asked_four_ways(app, pilot)
        await send(app, pilot, "remember that Priya leads billing")
        for question in BILLING_QUESTIONS:
            await send(app, pilot, question)
        await send(app, pilot, "/dream")
        before = commits(workspace)
        await pilot.press("f3")
        await until(pilot, lambda: isinstance(app.screen, DreamReview))
        assert len(app.screen.previews) == 2  # type: ignore[attr-defined]
        await pilot.press("A")
        await until(pilot, lambda: not isinstance(app.screen, DreamReview))
        await settle(app, pilot)
        after = commits(workspace)
        assert len(after) == len(before) + 2
        assert all(line.startswith("memory(dream): accept d-") for line in after[:2])
        memory = (workspace / "MEMORY.md").read_text()
        assert "Tom takes his coffee black." in memory and "Priya leads billing." in memory


async def test_an_acceptance_past_the_budget_asks_first(demo_app: MakeApp, workspace: Path) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await asked_four_ways(app, pilot)
        await send(app, pilot, "/dream")
        filler = "- " + "the long tail of a curated memory " * 60
        (workspace / "MEMORY.md").write_text(f"# MEMORY.md\n\n{filler}\n", encoding="utf-8")
        await pilot.press("f3")
        await until(pilot, lambda: isinstance(app.screen, DreamReview))
        screen = app.screen
        assert isinstance(screen, DreamReview) and screen.previews[0].budget.over
        before = commits(workspace)
        await pilot.press("a")
        note = str(screen.query_one("#review-note", Label).render())
        assert "press a again to accept anyway" in note
        assert commits(workspace) == before
        await pilot.press("a")
        await until(pilot, lambda: not isinstance(app.screen, DreamReview))
        await settle(app, pilot)
        after = commits(workspace)  # the MEMORY.md written above was an edit made outside Cairn:
        assert len(after) == len(before) + 2  # committed on its own before the acceptance
        assert after[1] == "edit made outside Cairn: MEMORY.md"
        assert after[0].startswith("memory(dream): accept d-")
        assert "its end is cut" in app.transcript.describe()


async def test_the_waiting_count_shows_from_the_start(demo_app: MakeApp, workspace: Path) -> None:
    first = demo_app()
    async with first.run_test(size=SIZE) as pilot:
        await asked_four_ways(first, pilot)
        await send(first, pilot, "/dream")
    again = demo_app()
    async with again.run_test(size=SIZE) as pilot:
        await started(again, pilot)
        assert str(again.query_one("#status-review", Label).render()) == "💭 1 to review"


async def test_idle_minutes_start_one_sweep_and_never_during_a_turn(
    demo_app: MakeApp, workspace: Path
) -> None:
    app = demo_app(dreaming=DreamSettings(idle_minutes=10))
    async with app.run_test(size=SIZE) as pilot:
        await asked_four_ways(app, pilot)
        now = [0.0]
        app.idle.clock = lambda: now[0]
        app.idle.active()
        now[0] += 9 * 60
        assert not app.dream_if_idle()
        now[0] += 60
        app._set_busy(True)
        assert not app.dream_if_idle()  # a turn is running
        app._set_busy(False)
        assert app.dream_if_idle()
        await settle(app, pilot)
        assert len(app.query(DreamBlock)) == 1
        assert "(idle)" in app.query_one(DreamBlock).describe()
        now[0] += 60 * 60
        assert not app.dream_if_idle()  # once per idle spell
        await pilot.press("x")
        now[0] += 10 * 60
        assert app.dream_if_idle()
        await settle(app, pilot)


async def test_a_decision_leaves_the_list_at_once_while_its_commit_runs(
    demo_app: MakeApp, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real core decides, but its stream is held until the test lets it go: meanwhile the
    list and its count already say what the decision leaves open, and the note what runs."""
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await asked_four_ways(app, pilot)
        await send(app, pilot, "remember that Priya leads billing")
        for question in BILLING_QUESTIONS:
            await send(app, pilot, question)
        await send(app, pilot, "/dream")
        release = asyncio.Event()
        decide = app.agent.decide

        async def held(decision: Decision) -> AsyncIterator[Event]:
            await release.wait()
            async for event in decide(decision):
                yield event

        monkeypatch.setattr(app.agent, "decide", held)
        before = commits(workspace)
        await pilot.press("f3")
        await until(pilot, lambda: isinstance(app.screen, DreamReview))
        screen = app.screen
        assert isinstance(screen, DreamReview)
        first, second = [p.proposal.id for p in screen.previews]
        box = screen.query_one("#review")
        assert box.border_title == "dreaming proposes · 2 open proposals"

        await pilot.press("a")
        options = screen.query_one(OptionList)
        await until(pilot, lambda: options.option_count == 1)
        assert options.get_option_at_index(0).id == second and screen.selected is not None
        assert box.border_title == "dreaming proposes · 1 open proposal"
        note = str(screen.query_one("#review-note", Label).render())
        assert note == f"accepting {first} — committing…"
        assert commits(workspace) == before, "the commit has not run yet"

        release.set()
        await until(pilot, lambda: len(commits(workspace)) == len(before) + 1)
        await until(pilot, lambda: not str(screen.query_one("#review-note", Label).render()))
        assert app.screen is screen and [p.proposal.id for p in screen.previews] == [second]

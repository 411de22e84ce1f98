"""SVG snapshots of the key screens. Regenerate with `.venv/bin/pytest tests/ui --snapshot-update`
and look at the diff before committing the new baselines."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Awaitable, Callable
from pathlib import Path

from textual.pilot import Pilot

from shell.headless.run import run_headless
from tests.ui.conftest import MakeApp, demo_settings, send, settle, started, until
from tests.ui.pilot_helpers import ASKED, CHAT, TOLD
from widgets.app import CairnApp
from widgets.screens.dream_review import DreamReview

SnapCompare = Callable[..., bool]


def after(*prompts: str, theme: str | None = None) -> Callable[[Pilot[None]], Awaitable[None]]:
    async def run_before(pilot: Pilot[None]) -> None:
        app = pilot.app
        assert isinstance(app, CairnApp)
        await started(app, pilot)
        for prompt in prompts:
            await send(app, pilot, prompt)
        if theme is not None:
            app.theme = theme
            await pilot.pause()
            app.clear_notifications()  # the switch's "theme: …" would cover the prompt
            await pilot.pause()

    return run_before


class TestScreens:
    """The real core with the demo brain (`demo_app`): what a person sees."""

    def test_empty_start(self, snap_compare: SnapCompare, demo_app: MakeApp) -> None:
        """Status bar with the demo badge and the start usage; the seeded memory files."""
        assert snap_compare(demo_app(), terminal_size=(120, 40), run_before=after())

    def test_tool_card_mid_conversation(self, snap_compare: SnapCompare, demo_app: MakeApp) -> None:
        """A memory write with its commit, a memory_search card with its hits, the answer."""
        assert snap_compare(demo_app(), terminal_size=(120, 40), run_before=after(TOLD, ASKED))

    def test_flush_and_compaction_receipt(
        self, snap_compare: SnapCompare, demo_app: MakeApp
    ) -> None:
        """Flush block, compaction receipt, re-injected rules; today's note pane."""
        assert snap_compare(
            demo_app(), terminal_size=(120, 40), run_before=after(TOLD, ASKED, *CHAT, "/compact")
        )

    def test_narrow_terminal(self, snap_compare: SnapCompare, demo_app: MakeApp) -> None:
        """80x24 over SSH: no side panes, the transcript takes the width."""
        assert snap_compare(demo_app(), terminal_size=(80, 24), run_before=after(TOLD, ASKED))

    def test_narrow_panes_over_the_transcript(
        self, snap_compare: SnapCompare, demo_app: MakeApp
    ) -> None:
        """80x24 after F2: the panes over the transcript (today's note, its last write
        highlighted; the gate log at its newest), the one-line strip above the prompt."""
        assert snap_compare(
            demo_app(), terminal_size=(80, 24), run_before=after(TOLD, ASKED), press=["f2"]
        )

    def test_resumed_session(
        self, snap_compare: SnapCompare, demo_app: MakeApp, workspace: Path
    ) -> None:
        """`--resume` after a headless run: its turns, flush block and receipt above the mark,
        the compaction counter and the gate log as they were."""
        settings = demo_settings(Path(workspace.name))
        inputs = [TOLD, ASKED, *CHAT, "/compact"]
        asyncio.run(run_headless(settings, inputs, out=io.StringIO()))
        assert snap_compare(demo_app(resume=True), terminal_size=(120, 40), run_before=after())

    def test_help_at_80x24(self, snap_compare: SnapCompare, demo_app: MakeApp) -> None:
        """/help lists every command with its key, and an unknown one names the nearest."""
        assert snap_compare(demo_app(), terminal_size=(80, 24), run_before=after("/flsuh", "/help"))

    def test_search_card_marks_a_stale_citation(
        self, snap_compare: SnapCompare, demo_app: MakeApp, workspace: Path
    ) -> None:
        """A remembered line cites the project's Makefile; the Makefile changes; the search
        card's hit says the citation is stale, in the theme's warning colour."""
        project = workspace.parent / "project"
        project.mkdir()
        (project / "Makefile").write_text("setup:\n\tpip install -e .\ntest:\n\tmake test-all\n")

        async def run_before(pilot: Pilot[None]) -> None:
            app = pilot.app
            assert isinstance(app, CairnApp)
            await after("remember that tests run with make test-all (Makefile#L3-L4)")(pilot)
            (project / "Makefile").write_text("setup:\n\tpip install -e .\ntest:\n\tmake check\n")
            await send(app, pilot, "how do tests run?")

        app = demo_app(project=project.resolve())
        assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)

    def test_light_theme(self, snap_compare: SnapCompare, demo_app: MakeApp) -> None:
        assert snap_compare(
            demo_app(), terminal_size=(120, 40), run_before=after(TOLD, ASKED, theme="cairn-light")
        )

    def test_high_contrast_theme(self, snap_compare: SnapCompare, demo_app: MakeApp) -> None:
        run_before = after(TOLD, ASKED, theme="cairn-contrast")
        assert snap_compare(demo_app(), terminal_size=(120, 40), run_before=run_before)

    def test_dusk_theme(self, snap_compare: SnapCompare, demo_app: MakeApp) -> None:
        run_before = after(TOLD, ASKED, theme="cairn-dusk")
        assert snap_compare(demo_app(), terminal_size=(120, 40), run_before=run_before)


QUESTIONS = [
    "how does Tom take his coffee?",
    "what coffee does Tom drink?",
    "does Tom want milk in his coffee?",
    "what is Tom's coffee order?",
]


class TestDreamReview:
    def test_review_queue(self, snap_compare: SnapCompare, demo_app: MakeApp) -> None:
        """/dream's block, then the review screen: the proposal, its evidence and its diff."""
        told = ("remember that Tom takes his coffee black", *QUESTIONS, "/dream")
        assert snap_compare(
            demo_app(), terminal_size=(120, 40), run_before=after(*told), press=["f3"]
        )

    def test_review_update_at_80x24(self, snap_compare: SnapCompare, demo_app: MakeApp) -> None:
        """At 80x24, an update: the MEMORY.md line a newer note supersedes, as a diff."""

        async def run_before(pilot: Pilot[None]) -> None:
            app = pilot.app
            assert isinstance(app, CairnApp)
            await after("remember that Tom takes his coffee black", *QUESTIONS, "/dream")(pilot)
            await send(app, pilot, "/review")
            await pilot.press("a")  # accepted this morning …
            await until(pilot, lambda: not isinstance(app.screen, DreamReview))
            await settle(app, pilot)
            app.agent.settings.clock.advance(hours=5)  # type: ignore[attr-defined]
            for prompt in ("remember that Tom switched to oat lattes", "/dream", "/review"):
                await send(app, pilot, prompt)  # … contradicted this afternoon
            await until(pilot, lambda: isinstance(app.screen, DreamReview))

        app = demo_app(embedder="minilm")
        assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


class TestHistory:
    def test_history_with_a_revert_preview(
        self, snap_compare: SnapCompare, demo_app: MakeApp
    ) -> None:
        """F5 after two writes: the commits with kind, session and turn, and `r`'s reverse
        diff of the newest, coloured, waiting for the confirmation."""

        async def run_before(pilot: Pilot[None]) -> None:
            app = pilot.app
            assert isinstance(app, CairnApp)
            await after(TOLD, "remember that the staging database is called heron")(pilot)
            await pilot.press("f5")
            await until(pilot, lambda: bool(getattr(app.screen, "commits", None)))
            await pilot.press("r")
            await until(pilot, lambda: getattr(app.screen, "pending", None) is not None)

        assert snap_compare(demo_app(), terminal_size=(120, 40), run_before=run_before)

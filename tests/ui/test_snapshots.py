"""SVG snapshots of the key screens. Regenerate with `.venv/bin/pytest tests/ui --snapshot-update`
and look at the diff before committing the new baselines."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from textual.pilot import Pilot

from tests.ui.conftest import send, settle
from tests.ui.scenarios import ASK, COMPACT, REMEMBER, conversation_agent
from widgets.app import CairnApp

SnapCompare = Callable[..., bool]


def after(*prompts: str, theme: str | None = None) -> Callable[[Pilot[None]], Awaitable[None]]:
    async def run_before(pilot: Pilot[None]) -> None:
        app = pilot.app
        assert isinstance(app, CairnApp)
        await settle(app, pilot)
        for prompt in prompts:
            await send(app, pilot, prompt)
        if theme is not None:
            app.theme = theme
            await pilot.pause()

    return run_before


class TestScreens:
    def test_empty_start(self, snap_compare: SnapCompare, workspace: Path) -> None:
        """Status bar with the demo badge and the start usage; empty gate log."""
        app = CairnApp(conversation_agent(workspace))
        assert snap_compare(app, terminal_size=(120, 40), run_before=after())

    def test_tool_card_mid_conversation(self, snap_compare: SnapCompare, workspace: Path) -> None:
        """A memory_search card with its hits table, then the streamed answer."""
        app = CairnApp(conversation_agent(workspace))
        assert snap_compare(app, terminal_size=(120, 40), run_before=after(ASK))

    def test_flush_and_compaction_receipt(self, snap_compare: SnapCompare, workspace: Path) -> None:
        """Memory write, flush block, compaction receipt, re-injection; today's note pane."""
        app = CairnApp(conversation_agent(workspace))
        assert snap_compare(app, terminal_size=(120, 40), run_before=after(REMEMBER, COMPACT))

    def test_narrow_terminal(self, snap_compare: SnapCompare, workspace: Path) -> None:
        """80x24 over SSH: no side panes, the transcript takes the width."""
        app = CairnApp(conversation_agent(workspace))
        assert snap_compare(app, terminal_size=(80, 24), run_before=after(ASK))

    def test_light_theme(self, snap_compare: SnapCompare, workspace: Path) -> None:
        app = CairnApp(conversation_agent(workspace))
        assert snap_compare(
            app, terminal_size=(120, 40), run_before=after(ASK, REMEMBER, theme="cairn-light")
        )


def _real_previews(root: Path) -> list[object]:
    """The review queue a real sweep makes: an add asked about four ways, an update."""
    import asyncio

    from tests.conftest import Clock
    from tests.core.dreams import WINDOW, DreamWorld, days_before

    clock = Clock()
    dream = DreamWorld(root, clock, embedder="minilm")
    last_week, yesterday = days_before(clock, 7, 1)
    dream.memory("- The office is in Oslo", "- Tom takes his coffee black", day=last_week)
    dream.note(yesterday, "- Tom switched to oat lattes")
    today = clock.now.date().isoformat()
    path = dream.note(today, "- The staging database is db-staging-2.internal, port 5433")
    dream.recalled(path, 1, ["staging db host?", "where is staging db", "staging port", "db?"])
    asyncio.run(dream.sweep())
    return list(dream.dreamer.open_proposals(window=WINDOW))


class TestDreamReview:
    def test_review_queue(self, snap_compare: SnapCompare, workspace: Path) -> None:
        """The review screen: the list, the highlighted add with its evidence and diff."""
        agent = conversation_agent(workspace)
        agent.proposals = _real_previews(workspace.parent / "dream")
        app = CairnApp(agent)
        assert snap_compare(app, terminal_size=(120, 40), run_before=after(), press=["f3"])

    def test_review_update_at_80x24(self, snap_compare: SnapCompare, workspace: Path) -> None:
        """At 80x24, the update proposal: the MEMORY.md line it replaces, as a diff."""
        agent = conversation_agent(workspace)
        agent.proposals = _real_previews(workspace.parent / "dream")
        app = CairnApp(agent)
        assert snap_compare(app, terminal_size=(80, 24), run_before=after(), press=["f3", "down"])

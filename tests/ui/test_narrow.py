"""Pilot tests of the small screen (80x24 over SSH) and of what keeps a layout steady: the side
strip, the panes overlay, panes that follow their newest entries, one-line tool card headers,
a meter that keeps its width, the command palette and the keys panel."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.command import CommandList, CommandPalette
from textual.geometry import Region
from textual.widgets import HelpPanel, Label, Static

from shell.commands import COMMANDS
from shell.events import FlushGateEvaluated, GateCondition, IndexSyncProgress, MemoryWritten
from tests.ui.conftest import MakeApp, send, settle, started, until
from tests.ui.fakes import FakeAgent
from tests.ui.pilot_helpers import DAILY, SIZE, TOLD, painted
from tests.ui.scenarios import usage
from widgets.app import CairnApp
from widgets.cards.blocks import CompactionReceipt
from widgets.cards.prose import Prose
from widgets.cards.prose_layout import STYLES
from widgets.cards.tool_call import ToolCallCard
from widgets.palette import TUI_COMMAND_ACTIONS, palette_commands
from widgets.panes.memory import MemoryFilePane, written_lines
from widgets.panes.strip import SideStrip, gate_summary, write_summary

NARROW = (80, 24)
LONG_TOLD = "remember that the quarterly planning meeting with the whole team is on the 1st"


def gate(projected: int, *, flush: bool = False) -> FlushGateEvaluated:
    conditions = [
        GateCondition("enabled", True, 1, 1, "memory flush is on"),
        GateCondition("tokens", flush, projected, 6000, f"{projected} / 6000 tokens"),
    ]
    return FlushGateEvaluated(flush, f"no: {projected} tokens", conditions, projected, 6000, 7000)


async def test_the_strip_shows_the_last_write_and_the_last_gate_verdict(
    demo_app: MakeApp,
) -> None:
    app = demo_app()
    async with app.run_test(size=NARROW) as pilot:
        await started(app, pilot)
        strip = app.query_one(SideStrip)
        assert strip.display and not app.side_panes.display
        await send(app, pilot, TOLD)

        line = " ".join(painted(label).strip() for label in strip.query(Label))
        assert f"✎ {DAILY} +1" in line
        assert "gate: skip (" in line and " < " in line
        assert "F2 panes" in line
        assert strip.region.height == 1 and app.status_bar.region.width == NARROW[0]

        await pilot.resize_terminal(*SIZE)
        await pilot.pause()
        assert not strip.display and app.side_panes.display


@pytest.mark.parametrize(
    ("added", "removed", "shown"), [(1, 0, "+1"), (1, 1, "+1 −1"), (0, 2, "−2"), (0, 0, "+0")]
)
def test_the_strip_counts_the_lines_a_write_removed(added: int, removed: int, shown: str) -> None:
    event = MemoryWritten(DAILY, 10, "abc1234", "tool", lines_added=added, lines_removed=removed)
    assert write_summary(event) == f"✎ {DAILY} {shown}"


def test_the_strip_names_what_held_a_flush_back_in_words() -> None:
    held_back = GateCondition(
        "not_flushed_this_cycle", False, 0, 0, "already flushed before compaction #1"
    )
    event = gate(6500)
    event = FlushGateEvaluated(False, "no", [*event.conditions[:1], held_back], 6500, 6000, 7000)

    assert gate_summary(event) == "gate: skip (already flushed)"


async def test_the_strip_forgets_the_old_session_s_gate_verdict_on_new(
    demo_app: MakeApp,
) -> None:
    app = demo_app()
    async with app.run_test(size=NARROW) as pilot:
        await started(app, pilot)
        strip = app.query_one(SideStrip)
        await send(app, pilot, TOLD)
        gate_label = strip.query_one("#strip-gate", Label)
        assert painted(gate_label).strip().startswith("gate: skip (")

        await send(app, pilot, "/new")

        assert painted(gate_label).strip() == "gate: —" and strip.last_gate is None


async def test_f2_opens_the_panes_over_the_transcript_and_esc_closes_them(
    demo_app: MakeApp,
) -> None:
    app = demo_app()
    async with app.run_test(size=NARROW) as pilot:
        await started(app, pilot)
        await send(app, pilot, TOLD)
        transcript_region = app.transcript.region

        await pilot.press("f2")
        await pilot.pause()
        side = app.side_panes
        assert app.side_overlay_open and side.display and side.styles.layer == "overlay"
        assert app.transcript.display and app.transcript.region == transcript_region
        assert side.region.width < NARROW[0] and side.region.right == NARROW[0]

        await pilot.press("tab")  # into the panes, then away: focus must come back
        await pilot.press("escape")
        await pilot.pause()
        assert not app.side_overlay_open and not side.display
        assert app.focused is app.prompt and not app.busy

        await pilot.press("f2", "f2")
        await pilot.pause()
        assert not side.display and app.focused is app.prompt


async def test_panes_follow_their_newest_entries(workspace: Path) -> None:
    daily = workspace / "memory" / "2026-05-01.md"
    daily.parent.mkdir()
    daily.write_text("".join(f"- note {n}\n" for n in range(80)), encoding="utf-8")
    agent = FakeAgent(workspace, start_script=[gate(n) for n in range(40)])
    app = CairnApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        side = app.side_panes
        await until(pilot, lambda: len(side.gate_log.entries) == 40)
        side.query_one("#memory-tabs").active = "tab-today"  # type: ignore[attr-defined]
        await pilot.pause()
        log = side.gate_log
        await until(pilot, lambda: log.max_scroll_y > 0 and log.scroll_y == log.max_scroll_y)
        today = side.query_one("#pane-today", MemoryFilePane)
        await until(pilot, lambda: today.max_scroll_y > 0)
        await until(pilot, lambda: today.scroll_y == today.max_scroll_y)
        prose = today.query_one(Prose)
        assert "note 79" in prose.lines(prose.size.width)[-1].content.plain
        last_row = Region(prose.region.x, prose.region.bottom - 1, prose.region.width, 1)
        assert today.region.contains_region(last_row)  # the newest note is in view
        assert log.region.contains_region(log.entries[-1].region)
        assert not log.region.contains_region(log.entries[0].region)

        log.scroll_home(animate=False)  # the user scrolled up: a new decision leaves it there
        await pilot.pause()
        await log.add_decision(gate(41))
        await pilot.pause()
        assert log.scroll_y == 0 and log.can_focus and today.can_focus


async def test_the_lines_of_the_last_write_are_highlighted(demo_app: MakeApp) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await send(app, pilot, TOLD)
        await send(app, pilot, "remember that the spare keys are in the blue locker")
        prose = app.side_panes.query_one("#pane-today", MemoryFilePane).query_one(Prose)
        marked = [
            line.content.plain
            for line in prose.lines(prose.size.width)
            if any(span.style == STYLES["written"] for span in line.content.spans)
        ]
        assert marked and all("blue locker" in row for row in marked)
        assert not any("deploy window" in row for row in marked)


def test_written_lines_are_the_new_ones_or_the_appended_tail() -> None:
    assert written_lines("a\nb\n", "a\nb\nc\n", 1) == {2}
    assert written_lines("a\nb\n", "a\nb\n\nc\nd\n", 2) == {3, 4}
    assert written_lines("a\nb\nc\n", "a\nb\nc\n", 1) == {2}  # already shown: the tail
    assert written_lines("", "a\n", 0) == set()


async def test_a_tool_card_header_stays_on_one_line_at_80_columns(demo_app: MakeApp) -> None:
    app = demo_app()
    async with app.run_test(size=NARROW) as pilot:
        await started(app, pilot)
        await send(app, pilot, LONG_TOLD)
        card = app.query(ToolCallCard).last()
        header = card.query_one(".tool-call--header", Static)
        assert header.region.height == 1
        text = painted(header).rstrip()
        assert text.endswith(" ms") and "✓" in text and "…" in text


async def test_the_meter_keeps_its_width_when_indexing_appears(workspace: Path) -> None:
    agent = FakeAgent(workspace, start_script=[usage(1234)])
    agent.turns["index"] = [IndexSyncProgress(2, 2, 4, 4)]
    app = CairnApp(agent)
    async with app.run_test(size=NARROW) as pilot:
        await settle(app, pilot)
        meter = app.status_bar.meter
        before_region, before_bar = meter.region, painted(meter)
        await send(app, pilot, "index")
        assert "indexing 2/2" in painted(app.status_bar.index_status)
        assert meter.region == before_region and painted(meter) == before_bar


async def test_the_palette_finds_and_runs_compact(demo_app: MakeApp) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await send(app, pilot, TOLD)
        app.prompt.value = "half typed"
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"compact")
        palette = app.screen
        assert isinstance(palette, CommandPalette)
        commands = palette.query_one(CommandList)

        def listed() -> list[str]:
            return [option.hit.text or "" for option in commands.options]  # type: ignore[attr-defined]

        await until(pilot, lambda: bool(listed()) and listed()[0] == "/compact")
        await pilot.press("enter")
        await until(pilot, lambda: not isinstance(app.screen, CommandPalette))
        await until(pilot, lambda: bool(app.query(CompactionReceipt)) or not app.busy)
        await settle(app, pilot)
        assert app.query(CompactionReceipt)
        assert app.prompt.value == "half typed" and app.focused is app.prompt


async def test_esc_closes_the_keys_panel_which_leaves_the_status_bar_alone(
    demo_app: MakeApp,
) -> None:
    app = demo_app()
    async with app.run_test(size=NARROW) as pilot:
        await started(app, pilot)
        app.action_show_help_panel()
        await pilot.pause()
        assert app.screen.query(HelpPanel)
        assert app.status_bar.region.width == NARROW[0]
        assert app.prompt.region.width == NARROW[0]
        await pilot.press("escape")
        await pilot.pause()
        assert not app.screen.query(HelpPanel) and app.focused is app.prompt


def test_the_palette_lists_every_command_of_the_registry() -> None:
    names = [command.name for command in palette_commands()]
    assert [c.name for c in COMMANDS] == names[: len(COMMANDS)]
    assert {"Toggle panes", "Cycle theme"} <= set(names)
    assert {"/clear", "/exit", "/compact", "/help"} <= set(names)


def test_every_tui_only_command_runs_an_action_of_the_app() -> None:
    tui_only = {c.name for c in COMMANDS if c.tui_only}
    assert set(TUI_COMMAND_ACTIONS) == tui_only
    for action in TUI_COMMAND_ACTIONS.values():
        assert callable(getattr(CairnApp, f"action_{action}", None)), action


async def test_new_names_its_flush_for_new_in_the_block_and_the_gate_log(
    demo_app: MakeApp,
) -> None:
    app = demo_app()
    async with app.run_test(size=NARROW) as pilot:
        await started(app, pilot)
        await send(app, pilot, TOLD)
        await send(app, pilot, "/new")

        assert gate_summary(app.side_panes.decisions[-1]) == "gate: flush (/new)"
        assert "flush: nothing to save (before /new)" in app.transcript.describe()

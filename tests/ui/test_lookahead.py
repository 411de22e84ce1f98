"""The meters that look ahead: the countdown to the next flush or compaction and the
sparkline of the prompt size per turn (pure functions, then Pilot on the real core)."""

from __future__ import annotations

import re
from dataclasses import replace
from itertools import pairwise
from pathlib import Path

from shell.build import build_agent
from shell.config import Settings
from tests.fakes.openai_script import Fault, Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.ui.conftest import MakeApp, Ticks, send, started
from tests.ui.pilot_helpers import painted
from widgets.app import CairnApp
from widgets.status.lookahead import countdown, growth_per_turn, spark_cells, turns_until

CHAT = (
    "My sister lives in Tromsø.",
    "The build server is ci-7.internal.",
    "Priya leads the billing migration.",
    "where does my sister live?",
    "tell me about the build server",
    "Our deploy window is Friday 14:00.",
    "who leads the billing migration?",
    "My cat is called Miso.",
    "when is our deploy window?",
)


def test_no_growth_until_two_turns_give_a_delta() -> None:
    assert growth_per_turn([]) is None
    assert growth_per_turn([900]) is None
    assert growth_per_turn([900, 1000]) == 100


def test_growth_is_the_mean_of_recent_growths_and_skips_drops() -> None:
    assert growth_per_turn([100, 200, 1200, 1300, 1400]) == 325
    assert growth_per_turn([1000, 3000, 800, 900]) == 1050  # the compaction's drop is skipped
    assert growth_per_turn([0, 10, 20, 1020, 2020, 3020, 4020, 5020], recent=3) == 1000


def test_the_turn_estimate_holds_steady_when_small_talk_and_searches_alternate() -> None:
    """Measured on the demo: a search adds ~290 tokens, small talk ~5-15, a fact ~95; and a
    compaction drops the prompt. The estimate must not swing with each kind of turn."""
    growths = [95, 298, 14, 5, 94, 292, 13, -900, 217, 286, 7, 90, 13, 285, 29, 93, 281]
    sizes = [800]
    for growth in growths:
        sizes.append(sizes[-1] + growth)
    estimates = [growth_per_turn(sizes[: n + 1]) for n in range(len(growths) - 8, len(growths))]
    steady = [e for e in estimates if e is not None]
    assert len(steady) == 8 and max(steady) <= 2 * min(steady)


def test_turns_until_rounds_up_and_needs_growth() -> None:
    assert turns_until(1200, 400) == 3
    assert turns_until(1201, 400) == 4
    assert turns_until(0, 400) == 1
    assert turns_until(1200, None) is None


def test_countdown_targets_the_flush_then_the_compaction() -> None:
    assert countdown(800, 2000, 3000, flushed=False, growth=None) == "flush in ~1.2k"
    assert countdown(800, 2000, 3000, flushed=False, growth=400) == "flush in ~1.2k · ~3 turns"
    assert countdown(800, 2000, 3000, flushed=True, growth=2200) == "compact in ~2.2k · ~1 turn"
    assert countdown(2500, 2000, 3000, flushed=False, growth=None) == "compact in ~500"
    assert countdown(800, 2000, 3000, flushed=False, growth=400, short=True) == "flush 1.2k·3t"
    assert countdown(800, 0, 0, flushed=False, growth=400) == ""


def test_spark_cells_scale_to_the_compaction_threshold_and_colour_past_thresholds() -> None:
    cells = spark_cells([0, 1000, 2000, 3000, 6000], 2000, 3000)
    assert [block for block, _ in cells] == ["▁", "▂", "▃", "▄", "█"]
    assert [level for _, level in cells] == [
        "ok",
        "ok",
        "over-flush",
        "over-compaction",
        "over-compaction",
    ]


async def test_the_countdown_decreases_across_turns_and_the_sparkline_grows(
    demo_app: MakeApp,
) -> None:
    app = demo_app(context_window=3072)
    async with app.run_test(size=(200, 40)) as pilot:  # wide: the long countdown
        await started(app, pilot)
        lookahead = app.status_bar.lookahead
        seen: list[tuple[int, str, int]] = []  # (compactions so far, target, tokens left)
        for turn, prompt in enumerate(CHAT, start=1):
            await send(app, pilot, prompt)
            shown = painted(lookahead)
            assert sum(shown.count(block) for block in "▁▂▃▄▅▆▇█") == turn  # a point per turn
            found = re.match(r"(flush|compact) in ~([\d.]+)(k?)( · ~\d+ turns?)?", shown)
            assert found, shown
            assert bool(found[4]) == (turn >= 2)  # turns only once two turns gave a growth
            left = round(float(found[2]) * (1000 if found[3] else 1))
            seen.append((app.status_bar.compactions.count, found[1], left))
        assert [target for _, target, _ in seen[:3]] == ["flush"] * 3
        assert "compact" in [target for _, target, _ in seen]  # after the flush
        for before, after in pairwise(seen):
            if before[:2] == after[:2]:  # the same cycle, the same threshold ahead
                assert after[2] < before[2], seen


async def test_at_80_columns_the_countdown_is_short_and_the_sparkline_hidden(
    demo_app: MakeApp,
) -> None:
    app = demo_app(context_window=3072)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        meter = app.status_bar.meter
        for prompt in CHAT[:3]:
            await send(app, pilot, prompt)
        shown = painted(app.status_bar.lookahead)
        assert re.fullmatch(r"(flush|compact) [\d.]+k?(·\d+t)?", shown.strip()), shown
        assert meter.size.width >= 16 and app.status_bar.virtual_size.width <= 80


async def test_after_a_failed_flush_the_countdown_still_says_flush(
    fake_settings: Settings, fake_openai: FakeOpenAI, workspace: Path
) -> None:
    """The core keeps the cycle open after a failed flush (it flushes again): the countdown
    reads the cycle from `UsageUpdated`, so it says flush until a flush settles the cycle."""
    settings = replace(fake_settings, max_attempts=1, timer=Ticks())
    app = CairnApp(build_agent(settings, index_in_background=False))
    async with app.run_test(size=(200, 40)) as pilot:
        await started(app, pilot)
        fake_openai.enqueue(Reply(text="noted"))
        await send(app, pilot, "My sister lives in Tromsø.")
        assert painted(app.status_bar.lookahead).startswith("flush in")
        fake_openai.enqueue(Fault(status=500))  # the flush call fails
        await send(app, pilot, "/flush")
        assert painted(app.status_bar.lookahead).startswith("flush in")
        for _ in range(2):  # two flushes that ignore memory_append: the cycle gives up
            fake_openai.enqueue(Reply(text="Happy to help!"))
            await send(app, pilot, "/flush")
        assert painted(app.status_bar.lookahead).startswith("compact in")

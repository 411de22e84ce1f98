"""Meters that look ahead: how far the next flush or compaction is (in tokens, and roughly in
turns), and the prompt's size across turns as a one-row sparkline.

Not Textual's `Sparkline`: it scales bars to the data's own minimum and maximum and splits the
data into as many buckets as it has cells, so a flat series looks full and the flush and
compaction thresholds cannot be shown in one row. Here each turn is one cell, scaled to the
compaction threshold, and a cell over the flush (compaction) threshold takes the meter's flush
(compaction) colour: the thresholds read as colour changes along the row.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import pairwise
from statistics import fmean
from typing import ClassVar

from rich.text import Text
from textual.widget import Widget

from widgets.format import tokens

RECENT_DELTAS = 8
"""The growth per turn is the mean of this many recent per-turn growths."""
BLOCKS = "▁▂▃▄▅▆▇█"
SPARK_CELLS = 12
"""At most this many turns (the latest) in the sparkline."""
MIN_SPARK_CELLS = 4
"""Narrower than this, no sparkline."""
LONG_COUNTDOWN_CHARS = len("compact in ~99.9k · ~99 turns")


def growth_per_turn(sizes: Sequence[int], recent: int = RECENT_DELTAS) -> int | None:
    """The prompt's growth per turn: the mean of the recent turn-to-turn growths, or None
    before two turns gave one. A drop (a compaction, turns dropped) is not growth: skipped.

    The mean, not the median: turns come in two sizes (small talk adds a few tokens, a search
    or a file read hundreds), and a median flips between them from one turn to the next, so
    the turn estimate jumped (`flush 402·20t`, a turn later `flush 102·5t`); what the next
    turns add up to is their mean."""
    deltas = [after - before for before, after in pairwise(sizes) if after >= before]
    return round(fmean(deltas[-recent:])) if deltas else None


def turns_until(left: int, growth: int | None) -> int | None:
    """Roughly how many turns until `left` more tokens (None without a growth)."""
    if growth is None or growth <= 0:
        return None
    return max(1, math.ceil(left / growth))


def countdown(
    used: int,
    flush_threshold: int,
    compaction_threshold: int,
    *,
    flushed: bool,
    growth: int | None,
    short: bool = False,
) -> str:
    """ "flush in ~1.2k · ~3 turns", or once this cycle flushed (or the prompt is past the
    flush threshold) "compact in ~…"; `short`: "flush 1.2k·3t". Empty without thresholds."""
    if flush_threshold <= 0 or compaction_threshold <= 0:
        return ""
    before_flush = not flushed and used < flush_threshold
    what, threshold = (
        ("flush", flush_threshold) if before_flush else ("compact", compaction_threshold)
    )
    left = max(0, threshold - used)
    turns = turns_until(left, growth)
    if short:
        return f"{what} {tokens(left)}" + (f"·{turns}t" if turns is not None else "")
    plural = "turn" if turns == 1 else "turns"
    return f"{what} in ~{tokens(left)}" + (f" · ~{turns} {plural}" if turns is not None else "")


def spark_cells(
    sizes: Sequence[int], flush_threshold: int, compaction_threshold: int
) -> list[tuple[str, str]]:
    """One (block, level) per size; level is ok, over-flush or over-compaction. Heights are
    scaled to the compaction threshold (or the largest size, if larger)."""
    top = max([compaction_threshold, *sizes, 1])
    cells = []
    for size in sizes:
        block = BLOCKS[min(len(BLOCKS) - 1, max(0, math.ceil(size / top * len(BLOCKS)) - 1))]
        if compaction_threshold and size >= compaction_threshold:
            level = "over-compaction"
        elif flush_threshold and size >= flush_threshold:
            level = "over-flush"
        else:
            level = "ok"
        cells.append((block, level))
    return cells


class LookAhead(Widget):
    """The countdown to the next flush or compaction, and the prompt size of each turn.

    It shares the status bar's free space with the token meter (each `1fr`), so its width, and
    the meter's, follow the terminal's width only, never what it shows. It draws what fits: the
    long countdown and the sparkline, else the short countdown and the sparkline, else the short
    countdown alone (its turns dropped if even that is too wide). The sparkline is right-aligned
    so its points stay put as the countdown's text changes.
    """

    DEFAULT_CSS = """
    LookAhead {
        width: 1fr;
        min-width: 13;
        max-width: 42;
        height: 1;
        & > .lookahead--countdown { color: $muted-text; }
        & > .lookahead--ok { color: $meter-ok; }
        & > .lookahead--over-flush { color: $meter-over-flush; }
        & > .lookahead--over-compaction { color: $meter-compacting; }
    }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "lookahead--countdown",
        "lookahead--ok",
        "lookahead--over-flush",
        "lookahead--over-compaction",
    }

    def __init__(self, *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(name=name, id=id)
        self.used = 0
        self.flush_threshold = 0
        self.compaction_threshold = 0
        self.flushed = False
        """Whether the core says this cycle's flush is settled (`UsageUpdated.cycle_flushed`)."""
        self.sizes: list[int] = []
        """The prompt size at the end of each turn."""

    def show_usage(
        self, used: int, flush_threshold: int, compaction_threshold: int, *, flushed: bool
    ) -> None:
        self.used, self.flush_threshold = used, flush_threshold
        self.compaction_threshold, self.flushed = compaction_threshold, flushed
        self.refresh()

    def end_turn(self) -> None:
        """A turn ended: its prompt size is the sparkline's next point."""
        self.sizes.append(self.used)
        self.refresh()

    def countdown(self, *, short: bool = False) -> str:
        growth = growth_per_turn(self.sizes)
        return countdown(
            self.used,
            self.flush_threshold,
            self.compaction_threshold,
            flushed=self.flushed,
            growth=growth,
            short=short,
        )

    def render(self) -> Text:
        width = self.content_size.width
        long = width >= LONG_COUNTDOWN_CHARS + 1 + MIN_SPARK_CELLS
        shown = self.countdown(short=not long)
        if len(shown) > width:
            shown = shown.partition("·")[0]  # the turns go first
        text = Text(shown, style=self.get_component_rich_style("lookahead--countdown"))
        cells = min(width - len(shown) - 1, SPARK_CELLS, len(self.sizes))
        if cells >= min(MIN_SPARK_CELLS, len(self.sizes)) and cells > 0:
            text.append(" " * (width - len(shown) - cells))  # right-aligned: it never jumps
            points = self.sizes[-cells:]
            for block, level in spark_cells(
                points, self.flush_threshold, self.compaction_threshold
            ):
                text.append(block, self.get_component_rich_style(f"lookahead--{level}"))
        text.truncate(width)
        return text

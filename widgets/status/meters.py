"""The token meter, the compaction counter and the index status: the numbers in the status bar."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from shell.events import (
    CompactionFailed,
    CompactionFinished,
    CompactionSkipped,
    CompactionStarted,
    UsageUpdated,
)
from widgets.format import tokens

NEAR_FLUSH_FRACTION = 0.8
"""The meter turns "near flush" at this fraction of the flush threshold."""

METER_STATES = ("-ok", "-near-flush", "-over-flush", "-compacting")

INDEX_SLOT_CHARS = 16
"""The index status is a fixed slot this wide (plus padding), so the meter beside it keeps
its width and its marks their place as the text changes."""
USED_CHARS = len("~99.9k")
"""The widest used-token count; the meter's label is padded to it so the bar never moves."""
UNCALIBRATED_TIP = (
    "~: our own count of the prompt; the provider has not reported one for this model yet"
)
MIN_BAR_CELLS = 8
"""Fewer cells than this left for the bar, and the label drops the window (`1.2k`)."""

MeterEvent = (
    UsageUpdated | CompactionStarted | CompactionFinished | CompactionFailed | CompactionSkipped
)
"""What the meter shows: the usage the core reports, and whether a compaction runs."""


class TokenMeter(Widget):
    """`1.2k / 8.2k` and a bar with the flush and compaction thresholds marked on it; `~1.2k`
    while the figure is our own count, not yet calibrated by what the provider reported.

    The state class (one of `METER_STATES`) colours the bar: below 80% of the flush threshold
    `-ok`, then `-near-flush`, `-over-flush` once past it, and `-compacting` while a compaction
    runs.
    """

    DEFAULT_CSS = """
    TokenMeter {
        height: 1;
        width: 1fr;
        min-width: 16;
        & > .token-meter--label { color: $foreground; text-style: bold; }
        & > .token-meter--track { color: $meter-track; }
        & > .token-meter--mark { color: $meter-mark; text-style: bold; }
        & > .token-meter--fill { color: $meter-ok; }
        &.-near-flush > .token-meter--fill { color: $meter-near-flush; }
        &.-over-flush > .token-meter--fill { color: $meter-over-flush; }
        &.-compacting > .token-meter--fill { color: $meter-compacting; }
        &.-over-flush > .token-meter--label { color: $meter-over-flush; }
        &.-compacting > .token-meter--label { color: $meter-compacting; }
    }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "token-meter--label",
        "token-meter--track",
        "token-meter--mark",
        "token-meter--fill",
    }

    used: reactive[int] = reactive(0)
    """Prompt tokens the next model call will send."""
    window: reactive[int] = reactive(8192)
    flush_threshold: reactive[int] = reactive(0)
    compaction_threshold: reactive[int] = reactive(0)
    compacting: reactive[bool] = reactive(False)
    """True between compaction_started and compaction_finished/failed."""

    def __init__(
        self,
        *,
        window: int = 8192,
        flush_threshold: int = 0,
        compaction_threshold: int = 0,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.set_reactive(TokenMeter.window, max(1, window))
        self.set_reactive(TokenMeter.flush_threshold, flush_threshold)
        self.set_reactive(TokenMeter.compaction_threshold, compaction_threshold)
        self.calibrated = False
        self._sync_state()

    def follow(self, event: MeterEvent) -> None:
        """The one writer of the meter's figures (the bridge calls it for each `MeterEvent`)."""
        if isinstance(event, UsageUpdated):
            self.window = event.window
            self.flush_threshold = event.flush_threshold
            self.compaction_threshold = event.compaction_threshold
            self.calibrated = event.calibrated
            self.tooltip = None if event.calibrated else UNCALIBRATED_TIP
            self.used = event.prompt_tokens
            self.refresh()
        else:
            self.compacting = isinstance(event, CompactionStarted)

    @property
    def state(self) -> str:
        """The current state class, without the dash: ok, near-flush, over-flush, compacting."""
        if self.compacting:
            return "compacting"
        if self.flush_threshold and self.used >= self.flush_threshold:
            return "over-flush"
        if self.flush_threshold and self.used >= NEAR_FLUSH_FRACTION * self.flush_threshold:
            return "near-flush"
        return "ok"

    @property
    def label(self) -> str:
        return f"{self._used_text} / {tokens(self.window)}"

    @property
    def _used_text(self) -> str:
        return tokens(self.used) if self.calibrated else f"~{tokens(self.used)}"

    def validate_used(self, used: int) -> int:
        return max(0, used)

    def validate_window(self, window: int) -> int:
        return max(1, window)

    def _sync_state(self) -> None:
        current = f"-{self.state}"
        for state in METER_STATES:
            self.set_class(state == current, state)

    def watch_used(self) -> None:
        self._sync_state()

    def watch_flush_threshold(self) -> None:
        self._sync_state()

    def watch_compacting(self) -> None:
        self._sync_state()

    def render(self) -> Text:
        widest = USED_CHARS + len(f" / {tokens(self.window)}")
        label = f"{self.label:<{widest}} "  # padded: the bar starts at the same column
        if self.size.width - len(label) < MIN_BAR_CELLS:  # narrow: the bar shows the window
            label = f"{self._used_text:<{USED_CHARS}} "
        text = Text(label, style=self.get_component_rich_style("token-meter--label"))
        width = max(0, self.size.width - len(label))
        if width < 4:
            return text
        fill_style = self.get_component_rich_style("token-meter--fill")
        track_style = self.get_component_rich_style("token-meter--track")
        mark_style = self.get_component_rich_style("token-meter--mark")

        def column(value: int) -> int:
            return min(width - 1, max(0, round(value / self.window * width)))

        filled = min(width, round(self.used / self.window * width))
        marks = {column(t) for t in (self.flush_threshold, self.compaction_threshold) if t > 0}
        for cell in range(width):
            if cell in marks:
                text.append("│", mark_style)
            elif cell < filled:
                text.append("━", fill_style)
            else:
                text.append("─", track_style)
        return text


class CompactionCounter(Widget):
    """🗜 N: how many compactions this session has had."""

    DEFAULT_CSS = """
    CompactionCounter { width: 7; height: 1; padding: 0 1; color: $meter-compacting; }
    """

    count: reactive[int] = reactive(0)

    def render(self) -> str:
        return f"🗜 {self.count}"


class IndexStatus(Widget):
    """The memory index: syncing progress, or how many chunks it holds. A fixed-width slot:
    the token meter beside it keeps its width (and its marks their place) as the text changes."""

    DEFAULT_CSS = """
    IndexStatus { width: 18; height: 1; padding: 0 1; color: $muted-text; }
    IndexStatus.-syncing { color: $warning; }
    """

    text: reactive[str] = reactive("index —")

    def show_progress(
        self, files_done: int, files_total: int, embedded: int = 0, to_embed: int = 0
    ) -> None:
        self.add_class("-syncing")
        if to_embed:
            self.text = f"embed {tokens(embedded)}/{tokens(to_embed)}"
        else:
            self.text = f"indexing {files_done}/{files_total}"

    def show_synced(self, chunks_total: int) -> None:
        self.remove_class("-syncing")
        text = f"index {tokens(chunks_total)} chunks"
        self.text = text if len(text) <= INDEX_SLOT_CHARS else f"{tokens(chunks_total)} chunks"

    def render(self) -> str:
        return self.text

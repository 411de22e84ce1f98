"""A dreaming sweep in the transcript: each phase's counts as they come, the proposals, and how
the sweep ended."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from shell.events import (
    DeepSleepFinished,
    DreamProposed,
    DreamSweepFinished,
    DreamSweepSkipped,
    DreamSweepStarted,
    LightSleepFinished,
    RemSleepFinished,
)
from shell.text import counted
from widgets.format import duration


def _day(iso: str) -> str:
    """MM-DD: the block's lines fit 80 columns; the year is in DREAMS.md's heading."""
    return iso[5:]


def stopped_text(event: DeepSleepFinished) -> str:
    from shell.dreaming.diary import stops_text

    return stops_text(event.stopped)


class DreamBlock(Static):
    """One sweep: started, light, REM, deep, its proposals, and the end."""

    DEFAULT_CSS = """
    DreamBlock {
        height: auto;
        margin: 0 0 1 0;
        padding: 0 1;
        border: round $dream-block-border;
        border-title-color: $dream-block-border;
        &.-failed { border: round $error; }
    }
    """

    def __init__(self, event: DreamSweepStarted) -> None:
        self.lines = [f"sweep {event.sweep_id} ({event.trigger}) …"]
        super().__init__(Text("\n".join(self.lines)))
        self.border_title = "dreaming"

    def phase(self, event: LightSleepFinished | RemSleepFinished | DeepSleepFinished) -> None:
        match event:
            case LightSleepFinished():
                line = (
                    f"light  {_day(event.since)} → {_day(event.until)} · "
                    f"{counted(event.notes, 'note')} · {counted(event.units, 'fact')} · "
                    f"{event.merged} merged · {len(event.reinforced)} reinforced"
                )
            case RemSleepFinished():
                themes = ", ".join(theme.word for theme in event.themes[:3]) or "none yet"
                line = (
                    f"REM    {_day(event.since)} → {_day(event.until)} · "
                    f"{counted(event.notes, 'note')} · themes: {themes} · "
                    f"{counted(len(event.truths), 'candidate truth')}"
                )
            case DeepSleepFinished():
                line = f"deep   {event.ranked} ranked · {event.passed} passed the gates"
                if event.updates:
                    line += f" · {counted(event.updates, 'line')} of MEMORY.md superseded"
                if event.stopped:
                    line += f" · stopped: {stopped_text(event)}"
        self._add(line)

    def proposed(self, event: DreamProposed) -> None:
        proposal = event.proposal
        by = "model" if proposal.distilled_by == "model" else "rule"
        self._add(
            f"  + {proposal.id} {proposal.kind}: {proposal.text} ({proposal.score:.2f}, {by})"
        )

    def finish(self, event: DreamSweepFinished) -> None:
        if event.outcome == "nothing_new":
            line = f"nothing new since the last sweep · {duration(event.duration_ms)}"
        else:
            line = f"DREAMS.md written · {duration(event.duration_ms)}"
        if event.open:
            line += f" · {counted(event.open, 'proposal')} to review: F3 or /review"
        self.lines[0] = self.lines[0].removesuffix(" …")
        self._add(line)

    def fail(self, event: DreamSweepSkipped) -> None:
        self.add_class("-failed")
        self._add(f"failed: {event.detail} (every file is as it was)")

    def _add(self, line: str) -> None:
        self.lines.append(line)
        self.update(Text("\n".join(self.lines)))

    def describe(self) -> str:
        return "dream: " + "\n".join(self.lines)

"""The transcript's non-chat blocks: notices, memory writes, flushes, compaction receipts, and
re-injections. Each has `describe()`, a plain-text account used by tests and replay checks."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Collapsible, Static

from shell.events import (
    CompactionFailed,
    CompactionFinished,
    CompactionStarted,
    ContextReinjected,
    ContextReport,
    FlushFinished,
    MemoryWritten,
)
from shell.lifecycle.gate import cycle_label
from shell.text import counted, line_change, short_sha
from widgets.format import context_lines, duration, tokens


class UserMessage(Static):
    """What the user typed (a prompt or a slash command)."""

    DEFAULT_CSS = """
    UserMessage {
        height: auto;
        margin: 1 0 1 0;
        padding: 0 1;
        border-left: outer $user-message-border;
        background: $boost;
        text-style: bold;
    }
    """

    def __init__(self, text: str) -> None:
        super().__init__(Text(text))
        self.text = text

    def describe(self) -> str:
        return f"user: {self.text}"


class NoticeLine(Static):
    """One muted line; `level` info, warning or error picks the colour."""

    DEFAULT_CSS = """
    NoticeLine {
        height: auto;
        padding: 0 1;
        color: $muted-text;
        &.-warning { color: $warning; }
        &.-error { color: $error; text-style: bold; }
    }
    """

    def __init__(self, text: str, level: str = "info") -> None:
        super().__init__(Text(text), classes=f"-{level}" if level in ("warning", "error") else "")
        self.text = text
        self.level = level

    def say(self, text: str) -> None:
        self.text = text
        self.update(Text(text))

    def describe(self) -> str:
        return f"{self.level}: {self.text}"


def scope_mark(scope: str) -> str:
    """A project's memory named before a path ("[project:heron] "); the global memory, the
    one there was before scopes, goes unmarked."""
    return "" if scope == "global" else f"[{scope}] "


def memory_write_text(event: MemoryWritten) -> str:
    path = f"{scope_mark(event.scope)}{event.path}"
    if event.outcome == "unchanged":
        lines = counted(event.lines_skipped, "line") if event.lines_skipped else "nothing new"
        return f"✎ {path}  unchanged, already in memory ({lines})  ({event.reason})"
    lines = line_change(event.lines_added, event.lines_removed)
    if event.lines_skipped:
        lines += f" ({event.lines_skipped} duplicate skipped)"
    text = f"✎ {path}  {lines}  {event.bytes} B  ({event.reason})"
    if event.outside_edit:  # committed on its own (`MemoryFiles.commit_outside_edits`)
        text = f"✎ {path}  {lines}  edit made outside Cairn"
    if event.outcome == "committed":
        return f"{text}  → {short_sha(event.commit)}"
    return f"{text}  ✗ not committed: {event.commit_error}"


class MemoryWriteLine(Static):
    """A memory file was written: path, +lines, bytes, and the commit (or why it failed)."""

    DEFAULT_CSS = """
    MemoryWriteLine {
        height: auto;
        padding: 0 1;
        margin: 0 0 1 0;
        color: $memory-write;
        &.-commit-failed { color: $error; }
        &.-unchanged { color: $muted-text; }
    }
    """

    def __init__(self, event: MemoryWritten) -> None:
        self.text = memory_write_text(event)
        state = {"committed": "", "unchanged": "-unchanged", "failed": "-commit-failed"}
        super().__init__(Text(self.text), classes=state[event.outcome])
        self.commit = event.commit
        if self.commit:
            self.tooltip = "click: show this commit in the memory history"

    async def on_click(self) -> None:
        """Show this commit: the memory history with it selected."""
        if self.commit:
            await self.app.run_action(f"history('{self.commit}')")

    def describe(self) -> str:
        return self.text


class FlushBlock(Static):
    """A memory flush: the agent asked to save what matters before compaction."""

    DEFAULT_CSS = """
    FlushBlock {
        height: auto;
        margin: 0 0 1 0;
        padding: 0 1;
        border: round $flush-block-border;
        border-title-color: $flush-block-border;
        &.-failed { border: round $error; }
    }
    """

    def __init__(self, target: str, cycle: int, trigger: str | None = None) -> None:
        # A flush before /new ends the session, not a compaction cycle: it is named for that.
        self.occasion = "before /new" if trigger == "new_session" else cycle_label(cycle)
        why = f", trigger {trigger}" if trigger and trigger != "new_session" else ""
        self.text = f"flushing to {target} ({self.occasion}{why}) …"
        super().__init__(Text(self.text))
        self.border_title = "memory flush"

    def finish(self, event: FlushFinished) -> None:
        match event.outcome:
            case "written":
                self.text = (
                    f"written {counted(event.lines, 'line')} to {event.target} → "
                    f"{short_sha(event.commit)}"
                )
                if event.by_rule:
                    self.text += " (by Cairn: the model stored nothing, so what you told is kept)"
            case "no_reply":
                self.text = f"nothing to save ({self.occasion})"
            case "ignored":
                self.text = f"ignored (failure {event.failures}): {event.error}"
            case "exhausted":
                self.text = f"exhausted after {event.failures} failures; no more flushes this cycle"
            case _:
                self.text = f"failed: {event.error or 'unknown error'}"
        self.set_class(event.outcome in ("failed", "ignored", "exhausted"), "-failed")
        self.update(Text(self.text))

    def describe(self) -> str:
        return f"flush: {self.text}"


class CompactionReceipt(Vertical):
    """A compaction, from started to its receipt: tokens before → after, turns summarised."""

    DEFAULT_CSS = """
    CompactionReceipt {
        height: auto;
        margin: 0 0 1 0;
        padding: 0 1;
        border: round $compaction-block-border;
        border-title-color: $compaction-block-border;
        &.-failed { border: round $error; }
        &.-skipped { border: round $muted-text; color: $muted-text; }
        & > Static { height: auto; }
        & > Collapsible { padding: 0; margin: 0; border-top: none; background: transparent; }
        & Prose { padding: 0; }
    }
    """

    def __init__(self, event: CompactionStarted) -> None:
        super().__init__()
        self.started = event
        focus = f", focus: {event.focus}" if event.focus else ""
        self.text = f"compacting ({event.trigger}{focus}) at {tokens(event.tokens_before)} tokens …"
        self.summary: str | None = None
        self.fallback: str | None = None
        self.border_title = "compaction"

    def compose(self) -> ComposeResult:
        yield Static(Text(self.text), classes="compaction--line")
        if self.summary is not None:  # finished before it mounted (a resumed past)
            yield self._summary(self.summary)

    def _summary(self, summary: str) -> Collapsible:
        title = "summary by rule" if self.fallback else "summary"
        from widgets.cards.prose import Prose  # see `widgets.cards.reply`

        return Collapsible(Prose(summary), title=title, collapsed=True)

    def _show_line(self) -> None:
        if self.is_mounted:  # else compose shows it
            self.query_one(".compaction--line", Static).update(Text(self.text))

    def finish(self, event: CompactionFinished) -> None:
        self.border_title = f"compaction #{event.compaction_count}"
        self.text = (
            f"{event.trigger}: {tokens(event.tokens_before)} → {tokens(event.tokens_after)} tokens"
            f" · {event.turns_summarised} turns summarised · {event.messages_kept} messages kept"
            f" · {duration(event.duration_ms)}"
        )
        if event.attempts > 1:
            self.text += f" · {event.attempts} attempts"
        if event.fallback:
            self.text += f" · summary by rule ({event.fallback})"
        self.summary = event.summary
        self.fallback = event.fallback
        self._show_line()
        if self.is_mounted:
            self.mount(self._summary(event.summary))

    def fail(self, event: CompactionFailed) -> None:
        self.add_class("-failed")
        self.text = (
            f"failed ({event.trigger}) after {event.attempts} attempts: {event.reason}"
            " — history kept as it was"
        )
        self._show_line()

    def skip(self, reason: str) -> None:
        self.add_class("-skipped")
        self.text = f"skipped: {reason}"
        self._show_line()

    def describe(self) -> str:
        summary = f"\nsummary: {self.summary}" if self.summary else ""
        return f"{self.border_title}: {self.text}{summary}"


class ContextBlock(Static):
    """`/context`: the next prompt, how it was counted, and what the bootstrap left out."""

    DEFAULT_CSS = """
    ContextBlock {
        height: auto;
        margin: 0 0 1 0;
        padding: 0 1;
        border-left: outer $reinjection-border;
    }
    """

    def __init__(self, event: ContextReport) -> None:
        self.text = "\n".join(context_lines(event))
        super().__init__(Text(self.text))

    def describe(self) -> str:
        return self.text


class ReinjectionBlock(Vertical):
    """After a compaction, which AGENTS.md sections went back into the system prompt."""

    DEFAULT_CSS = """
    ReinjectionBlock {
        height: auto;
        margin: 0 0 1 0;
        padding: 0 1;
        border-left: outer $reinjection-border;
        & > Static { height: auto; color: $reinjection-border; }
        & > Collapsible { padding: 0; margin: 0; border-top: none; background: transparent; }
    }
    """

    def __init__(self, event: ContextReinjected) -> None:
        super().__init__()
        self.event = event
        sections = ", ".join(event.sections) or "none"
        self.text = f"↻ re-injected after compaction: {sections} ({event.chars} chars)"

    def compose(self) -> ComposeResult:
        yield Static(Text(self.text))
        yield Collapsible(Static(Text(self.event.text)), title="text", collapsed=True)

    def describe(self) -> str:
        return self.text

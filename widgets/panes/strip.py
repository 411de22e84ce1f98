"""The side area folded into one line for narrow terminals: the last memory write, the last
flush gate verdict, and the key that opens the panes."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label

from shell.events import GATE_HELD_BACK, GATE_REQUIRED, FlushGateEvaluated, MemoryWritten
from widgets.format import tokens
from widgets.status.sync import SyncStatus


def write_summary(event: MemoryWritten) -> str:
    """`✎ memory/2026-12-01.md +1`: the file and its lines added (`+1 −1`, `−1` when the write
    removed lines)."""
    if event.outcome == "unchanged":
        return f"✎ {event.path} (no new lines)"
    suffix = " (not committed)" if event.outcome == "failed" else ""
    added, removed = event.lines_added, event.lines_removed
    change = " ".join(
        [*([f"+{added}"] if added or not removed else []), *([f"−{removed}"] if removed else [])]
    )
    return f"✎ {event.path} {change}{suffix}"


def gate_summary(event: FlushGateEvaluated) -> str:
    """`gate: skip (1.2k < 3.1k)`, `gate: flush (3.2k ≥ 3.1k)`, the first condition that held
    a flush back (`gate: skip (already flushed)`), or what else fired it (`gate: flush
    (before compaction)`)."""
    used, threshold = tokens(event.projected_tokens), tokens(event.flush_threshold)
    held = {c.name for c in event.conditions if c.ok}
    if event.flush:
        if event.before == "new_session":
            return "gate: flush (/new)"
        if event.before == "compaction":
            return "gate: flush (before compaction)"
        if "tokens" in held:
            return f"gate: flush ({used} ≥ {threshold})"
        if "transcript_size" in held:
            return "gate: flush (transcript size)"
        return f"gate: flush (before {event.before.replace('_', ' ')})"
    failed = {c.name for c in event.conditions if not c.ok}
    for name in GATE_REQUIRED:
        if name in failed:
            return f"gate: skip ({GATE_HELD_BACK[name]})"
    return f"gate: skip ({used} < {threshold})"


class SideStrip(Horizontal):
    """One line in place of the side column (below `NARROW_WIDTH` columns). F2 opens the panes
    over the transcript."""

    DEFAULT_CSS = """
    SideStrip {
        height: 1;
        width: 1fr;
        background: $panel;
        color: $muted-text;
        & > Label { width: auto; padding: 0 1; }
        & > #strip-write {
            width: 1fr;
            color: $memory-write;
            text-overflow: ellipsis;
            text-wrap: nowrap;
        }
        & > #strip-write.-none { color: $muted-text; }
        & > #strip-keys { color: $primary; }
        & > SyncStatus { width: 14; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.last_write: MemoryWritten | None = None
        self.last_gate: FlushGateEvaluated | None = None

    def compose(self) -> ComposeResult:
        yield Label("✎ no writes yet", id="strip-write", classes="-none")
        yield Label("gate: —", id="strip-gate")
        yield SyncStatus(id="strip-sync")  # the status line has no room for it under 100 columns
        yield Label(Text.assemble(("F2", "bold"), " panes"), id="strip-keys")

    def memory_written(self, event: MemoryWritten, *, shown: bool = True) -> None:
        """The last write; `shown` False keeps it for `show_last` (a resumed session's past)."""
        self.last_write = event
        if shown:
            label = self.query_one("#strip-write", Label)
            label.update(write_summary(event))
            label.remove_class("-none")

    def gate_evaluated(self, event: FlushGateEvaluated, *, shown: bool = True) -> None:
        """The last gate decision; `shown` as for `memory_written`."""
        self.last_gate = event
        if shown:
            self.query_one("#strip-gate", Label).update(gate_summary(event))

    def show_last(self) -> None:
        """Show the last write and decision kept (a past's hundreds relabel the strip once)."""
        if self.last_write is not None:
            self.memory_written(self.last_write)
        if self.last_gate is not None:
            self.gate_evaluated(self.last_gate)

    def session_started(self) -> None:
        """A new session (`/new`) has made no gate decision yet."""
        self.last_gate = None
        self.query_one("#strip-gate", Label).update("gate: —")

    @property
    def sync(self) -> SyncStatus:
        return self.query_one(SyncStatus)

    def describe(self) -> str:
        """The strip as plain text (for tests)."""
        write = write_summary(self.last_write) if self.last_write else "✎ no writes yet"
        gate = gate_summary(self.last_gate) if self.last_gate else "gate: —"
        return f"{write} · {gate} · F2 panes"

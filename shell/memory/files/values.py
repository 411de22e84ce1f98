"""The values that pass through the memory-file door (`shell.memory.files.door.MemoryFiles`).

What a bounded read returns (`ReadResult`), what a whole-file edit carries (`Edit`), what a
write reports (`WriteOutcome`: its event, a cleared git lock, a redaction), and the error a
refused or failed write raises (`MemoryWriteError`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from shell.events import Event, GitLockCleared, MemoryWritten, SecretsRedacted
from shell.tools.toolbox import ToolError


class MemoryWriteError(ToolError):
    """A memory write was refused (stale read, size limit) or could not be done."""


@dataclass(frozen=True)
class ReadResult:
    path: str
    text: str
    from_line: int
    lines: int
    """How many lines `text` holds."""
    total_lines: int
    next_from: int | None
    """The line to continue from, when more of the file remains."""
    truncated: bool
    """True when the character cap cut the requested range short."""


@dataclass(frozen=True)
class Edit:
    """A whole-file change made from what was read: the file must still hold `before`."""

    path: str
    before: str
    after: str


@dataclass(frozen=True)
class WriteOutcome:
    event: MemoryWritten
    lock_cleared: GitLockCleared | None
    redaction: SecretsRedacted | None = None
    outside: MemoryWritten | None = None
    """The commit of an edit made outside Cairn that the file held before this write, made on
    its own just before this write's commit (`MemoryFiles.commit_outside_edits`)."""


def written_facts(outcomes: Iterable[WriteOutcome]) -> list[Event]:
    """The events of writes, each in order: a cleared lock, a redaction, the write."""
    events: list[Event] = []
    for outcome in outcomes:
        events += [e for e in (outcome.lock_cleared, outcome.redaction) if e is not None]
        events.append(outcome.event)
    return events

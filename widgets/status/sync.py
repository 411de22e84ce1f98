"""The status line's sync slot, and the sync conflicts still open (the F6 modal lists them).

A fixed-width slot like the index status: hidden until the first `SyncStatusChanged` names a
remote (a workspace without one shows nothing), then as wide whatever it says, so the token
meter beside it keeps its width and its marks their place. The long form ("⇅ synced 2 min
ago") shows when it fits the slot, else the short one ("⇅ 2m"); app.tcss narrows the slot below
150 columns. It re-renders every `REFRESH_S`, so "synced N min ago" ages.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from textual.widget import Widget

from shell.events import SyncConflict, SyncStatusChanged
from widgets.format import sync_state

REFRESH_S = 30.0


def _utc_now() -> datetime:
    return datetime.now(UTC)


class SyncStatus(Widget):
    """Where the workspace's sync stands: synced how long ago, commits to push, offline, or
    conflicts to review (`-offline`, `-conflict` colour it)."""

    DEFAULT_CSS = """
    SyncStatus {
        width: 24; height: 1; padding: 0 1; color: $muted-text;
        &.-none { display: none; }
        &.-offline { color: $warning; }
        &.-conflict { color: $error; text-style: bold; }
    }
    """

    def __init__(self, *, now: Callable[[], datetime] = _utc_now, id: str | None = None) -> None:
        super().__init__(id=id, classes="-none")
        self._now = now
        """The sync's own clock: the core stamps `last_sync` with the system's time."""
        self.state: SyncStatusChanged | None = None
        self.conflicts: dict[str, SyncConflict | None] = {}
        """The open conflicts, by file: the event that showed its diff (None: known from the
        status alone, e.g. left open by an earlier session)."""

    def on_mount(self) -> None:
        self.set_interval(REFRESH_S, self.refresh)

    def show(self, event: SyncStatusChanged) -> None:
        self.state = event
        self.conflicts = {file: self.conflicts.get(file) for file in event.conflicts}
        self.set_class(event.remote is None, "-none")
        self.set_class(event.offline and not event.conflicts, "-offline")
        self.set_class(bool(event.conflicts), "-conflict")
        self.refresh()

    def conflict_seen(self, event: SyncConflict) -> None:
        self.conflicts[event.file] = event

    def resolved(self, file: str) -> None:
        self.conflicts.pop(file, None)

    @property
    def text(self) -> str:
        if self.state is None:
            return ""
        now = self._now()
        long = sync_state(self.state, now)
        return (
            long
            if len(long) <= self.content_region.width
            else sync_state(self.state, now, short=True)
        )

    def render(self) -> str:
        return self.text

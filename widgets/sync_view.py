"""Where the sync's events show: a line or a block in the transcript, the sync status in the
status bar (and the strip of a narrow terminal), and the panes re-read after a pull or after
the history was rewritten (a redaction, a forget)."""

from __future__ import annotations

from typing import TYPE_CHECKING, assert_never

from shell.events import (
    MemoryForgotten,
    SyncCloned,
    SyncConflict,
    SyncFailed,
    SyncFinished,
    SyncForgotten,
    SyncRecovered,
    SyncRedacted,
    SyncRedactionPreviewed,
    SyncRemoteAdded,
    SyncResolved,
    SyncStatusChanged,
)
from shell.events.sync import SyncEvent
from shell.sync.describe import redaction_preview, sync_line
from widgets.cards.sync_blocks import ConflictBlock, SyncBlock

if TYPE_CHECKING:
    from widgets.panes.side import SidePanes
    from widgets.panes.strip import SideStrip
    from widgets.status.bar import StatusBar
    from widgets.transcript import Transcript


class SyncView:
    """Shows each sync event; remembers whether an offline background sync was said."""

    def __init__(
        self,
        transcript: Transcript,
        status: StatusBar,
        side: SidePanes,
        strip: SideStrip | None,
    ) -> None:
        self.transcript = transcript
        self.status = status
        self.side = side
        self.strip = strip
        self._offline_said = False
        """A background sync found the remote unreachable and said so: its retries stay quiet
        until a sync completes."""

    async def route(self, event: SyncEvent | MemoryForgotten, *, background: bool) -> None:
        """`background`: the sync ran between turns, not because the user asked."""
        match event:
            case SyncRemoteAdded() | SyncCloned() | SyncRecovered():
                await self.transcript.add_notice(sync_line(event) or "")
            case SyncConflict():
                self.status.sync.conflict_seen(event)
                await self.transcript.add_block(ConflictBlock(event))
            case SyncFinished(pulled_commits=pulled, conflicts=conflicts):
                self._offline_said = False
                await self.side.synced(event.changed)
                if pulled or conflicts:
                    await self.transcript.add_block(SyncBlock(event))
                elif not background:  # a /sync the user asked for: a quiet line
                    await self.transcript.add_notice(sync_line(event) or "")
            case SyncFailed(kind="offline") if background and self._offline_said:
                pass  # a retry while offline: said once already
            case SyncFailed(kind=kind):
                self._offline_said = self._offline_said or (kind == "offline" and background)
                await self.transcript.add_notice(sync_line(event) or "", "warning")
            case SyncResolved(file=file):
                self.status.sync.resolved(file)
                for block in self.transcript.find(ConflictBlock):
                    if block.file == file:
                        block.resolve(event)
                await self.transcript.add_notice(sync_line(event) or "")
            case SyncRedactionPreviewed(findings=found):
                await self.transcript.add_notice(
                    redaction_preview(event), "warning" if found else "info"
                )
            case MemoryForgotten(applied=applied, commits=commits, files=files):
                verb = "forgot" if applied else "would forget"
                await self.transcript.add_notice(
                    f"{verb} a line: {commits} commit(s) rewritten, {len(files)} file(s) changed"
                )
                if applied:
                    await self.side.synced(files)
            case SyncRedacted(files=files) | SyncForgotten(files=files):
                await self.side.synced(files)
                await self.transcript.add_notice(sync_line(event) or "")
            case SyncStatusChanged():
                self.status.sync.show(event)
                if self.strip is not None:
                    self.strip.sync.show(event)
            case _:
                assert_never(event)

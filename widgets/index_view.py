"""Where the memory index's events show: its progress and size in the status bar, a notice for
a rebuild and for a file too large to index whole, and the panes once the first sync is done or
a sync saw files change."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shell.events import CappedFile, IndexRebuilt, IndexSynced, IndexSyncProgress
from shell.memory.describe import capped_notice

if TYPE_CHECKING:
    from widgets.panes.side import SidePanes
    from widgets.status.bar import StatusBar
    from widgets.transcript import Transcript


class IndexView:
    """Shows each index event; remembers which capped files were said, to say each once (a
    session's syncs come from more than one index: its own memory's and the global one's)."""

    def __init__(self, transcript: Transcript, status: StatusBar, side: SidePanes) -> None:
        self.transcript = transcript
        self.status = status
        self.side = side
        self._capped_said: set[CappedFile] = set()

    async def route(self, event: IndexSyncProgress | IndexSynced | IndexRebuilt) -> None:
        match event:
            case IndexSyncProgress(files_done=done, files_total=total):
                self.status.index_status.show_progress(done, total, event.embedded, event.to_embed)
            case IndexSynced(chunks_total=chunks):
                self.status.index_status.show_synced(chunks)
                if unsaid := [c for c in event.capped if c not in self._capped_said]:
                    await self.transcript.add_notice(capped_notice(unsaid), "warning")
                    self._capped_said.update(unsaid)
                if event.trigger == "session_start":  # the core's watcher starts after it
                    await self.side.index_ready()
                elif event.files_changed or event.files_removed:  # a pull, a file deleted
                    await self.side.reread()
            case IndexRebuilt(reason="missing", scope=scope):
                await self.transcript.add_notice(f"{scope} memory: index built from the files")
            case IndexRebuilt(reason=reason, scope=scope):
                await self.transcript.add_notice(
                    f"{scope} memory: index rebuilt from the files: {reason}", "warning"
                )

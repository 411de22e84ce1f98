"""A memory file a person edited in their own editor (the TUI's `$EDITOR` key): committed as
their edit through the one door, said as a `MemoryWritten` event (the transcript's write line,
the pane, the git log), then the index re-synced so a search finds the new text at once.

An unchanged file commits nothing and says so; a path that is no memory file, or a commit that
fails, is a notice and changes nothing else.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from shell.events import Event, Notice
from shell.memory.files.door import MemoryFiles
from shell.memory.service import RecallService
from shell.tools.toolbox import ToolError


async def commit_user_edit(
    files: MemoryFiles, recall: RecallService, rel: str
) -> AsyncIterator[Event]:
    """The events of committing `rel` (workspace-relative) after an edit in the user's editor."""
    try:
        written = await asyncio.to_thread(files.commit_user_edit, rel)
    except (ToolError, OSError) as error:  # no memory file, an unreadable one, a failed commit
        yield Notice(f"{rel}: your edit could not be committed: {error}", "error")
        return
    if written is None:
        yield Notice(f"{rel} unchanged in the editor: nothing to commit")
        return
    yield written
    for event in await asyncio.to_thread(recall.sync, "manual"):
        yield event

"""A headless sync's progress on stderr: files chunked, then texts embedded, at most once a second.

`cairn search` and `cairn index` catch the index up with the files before they answer; on a
large workspace, or after the embedding model changed, that is minutes of work, which must not
look like a hang. Nothing is printed for a sync shorter than a second. The lines hold counts only.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from shell.events import IndexSyncProgress
from shell.headless.output import Out

QUIET_S = 1.0
"""Nothing is printed before a sync has run this long, nor more often than this."""


class ProgressLines:
    """A progress callback for `MemoryIndex.sync` that prints a line now and then.

    Args:
        err: Where the lines go (stderr by default).
        timer: Monotonic seconds (injected in tests).
    """

    def __init__(self, err: Out | None = None, timer: Callable[[], float] = time.monotonic) -> None:
        self._err = err
        self._timer = timer
        self._started = timer()
        self._last = self._started

    def __call__(self, event: IndexSyncProgress) -> None:
        now = self._timer()
        if now - self._last < QUIET_S:
            return
        self._last = now
        (self._err or sys.stderr).write(describe_progress(event) + "\n")


def describe_progress(event: IndexSyncProgress) -> str:
    """One line for a progress event: `indexing: 120/3,650 files` or `embedding: …`."""
    if event.to_embed:
        share = 100 * event.embedded // max(1, event.to_embed)
        return (
            f"cairn: embedding {event.embedded:,}/{event.to_embed:,} texts ({share}%), "
            "kept as it goes: an interrupted run resumes"
        )
    return f"cairn: indexing {event.files_done:,}/{event.files_total:,} files"

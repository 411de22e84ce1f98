"""Importing the heavy libraries (litellm, LanceDB, fastembed) with the collector out of the way.

Their imports build hundreds of thousands of long-lived objects, and the cyclic collector, left
on, walks them again and again while they are made: 13% of litellm's import (median 3.6 s →
3.1 s over 8 interleaved pairs) and 11% of LanceDB's and fastembed's (2.06 s → 1.84 s). Frozen
afterwards, they are skipped by every later full collection, which after litellm alone would
take ~0.2 s each: a visible stall in the TUI. A frozen object that later becomes part of an
unreachable cycle is never reclaimed; what exists at these moments (modules, the first frame's
widgets) lives as long as the process.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_pauses = 0
_was_enabled = True


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector around a heavy import, then freeze what exists.

    Pauses nest and may overlap across threads: the collector comes back (as it was) when the
    last one ends.
    """
    global _pauses, _was_enabled
    with _lock:
        if _pauses == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _lock:
            _pauses -= 1
            if _pauses == 0:
                gc.freeze()
                if _was_enabled:
                    gc.enable()

"""One lock per repository, shared by everything in this process that touches its tree or HEAD.

A memory commit (`shell.git.store`), a revert (`shell.git.history`) and a sync's merge
(`shell.sync.engine`) each hold it, so none interleaves with another. It is reentrant: a revert
holds it while it commits through the store.
"""

from __future__ import annotations

import threading
from pathlib import Path

_locks: dict[Path, threading.RLock] = {}
_guard = threading.Lock()


def repo_lock(root: Path) -> threading.RLock:
    """The lock of the repository whose working tree is `root` (resolved, so every spelling of
    one path shares it)."""
    with _guard:
        return _locks.setdefault(Path(root).resolve(), threading.RLock())

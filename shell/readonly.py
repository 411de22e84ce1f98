"""A workspace Cairn cannot write (a read-only mount, another user's folder): how it is told,
and where its derived state (the index, sessions) goes instead, so that memory can still be
read and searched."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

_SCRATCH: dict[Path, Path] = {}


def read_only(root: Path) -> bool:
    """Whether the workspace exists and cannot be written."""
    return root.is_dir() and not os.access(root, os.W_OK)


def scratch_state(root: Path) -> Path:
    """This run's private temporary folder (0700) for the state of workspace `root`, the same
    for every call, removed at exit: each run indexes the files again."""
    if root not in _SCRATCH:
        folder = Path(tempfile.mkdtemp(prefix="cairn-state-")) / ".cairn"
        atexit.register(shutil.rmtree, folder.parent, ignore_errors=True)
        _SCRATCH[root] = folder
    return _SCRATCH[root]

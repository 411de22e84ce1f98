"""One memory on every machine: the workspace syncs through a git remote, no line lost.

`SyncEngine` (engine.py) adds a remote, syncs (fetch, merge, push), settles conflicts and
recovers after a kill; `clone_workspace` (clone.py) joins a second machine. The merge rules
are in merge.py, the fetch and the taking-in of a merge in pull.py, what a repository needs
before it syncs in prepare.py, the cleanup after a kill and the resolving of conflicts in
repair.py, what other machines did to a conflict, told here, in told.py, the persisted
state and `Backoff` in state.py, a sync event's line in describe.py.
The scan of what would leave is `shell.secrets.push_scan`; git runs through `shell.git`; the
events are in `shell.events.sync`.
"""

from __future__ import annotations

from shell.git.runner import redact_url
from shell.sync.clone import clone_workspace
from shell.sync.engine import SyncEngine
from shell.sync.state import Backoff, SyncStatus

__all__ = ["Backoff", "SyncEngine", "SyncStatus", "clone_workspace", "redact_url"]

"""What the sync remembers between runs, the open conflicts, and the retry delays.

Everything lives under the workspace's git-ignored `.cairn/sync/`: `state.json` (the last sync,
the remote's branch and its head last fetched, whether the remote was unreachable) and
`conflicts/` (per open conflict, the remote's version of the file and a JSON record of both
shas).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from shell.fsio import write_atomically

SYNC_DIR = ".cairn/sync"
CONFLICTS_DIR = f"{SYNC_DIR}/conflicts"


@dataclass(frozen=True)
class SyncStatus:
    """The sync's side of the status line."""

    remote: str | None
    """The remote's URL, userinfo redacted; None when the workspace has no remote."""
    last_sync: datetime | None
    ahead: int
    """Local commits the remote does not have yet."""
    behind: int
    """Remote commits not merged yet, as of the last fetch."""
    offline: bool
    """The last attempt could not reach the remote."""
    conflicts: list[str] = field(default_factory=list)
    last_error: str | None = None


@dataclass
class SavedState:
    """The persisted part of the sync's state."""

    last_sync: str | None = None
    """ISO 8601 time of the last complete sync."""
    remote_head: str | None = None
    """The remote's head at the last fetch: a new head must descend from it."""
    offline: bool = False
    last_error: str | None = None
    branch: str | None = None
    """The remote's branch the workspace syncs with (`shell.sync.clone`'s rule); None before
    the first sync that reached the remote, and in a state saved before it was recorded."""


def load_state(root: Path) -> SavedState:
    """The saved state, or a fresh one when there is none or it is unreadable."""
    try:
        data = json.loads((root / SYNC_DIR / "state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return SavedState()
    if not isinstance(data, dict):
        return SavedState()

    def text(key: str) -> str | None:
        value = data.get(key)
        return value if isinstance(value, str) else None

    return SavedState(
        last_sync=text("last_sync"),
        remote_head=text("remote_head"),
        offline=data.get("offline") is True,
        last_error=text("last_error"),
        branch=text("branch"),
    )


def save_state(root: Path, state: SavedState) -> None:
    """Persist `state` atomically."""
    folder = root / SYNC_DIR
    folder.mkdir(parents=True, exist_ok=True)
    write_atomically(folder / "state.json", json.dumps(asdict(state), indent=2) + "\n")


@dataclass(frozen=True)
class ConflictRecord:
    """One open conflict: the remote's version of `file` saved beside the record.

    When `held`, the file (and the merge commit pushed) holds both sides' lines until it is
    settled: take local removes `remote_only`, take remote removes `local_only`, both keeps the
    file. A record without it (from before) kept the local version as it was.
    """

    file: str
    local_sha: str
    """The local commit the merge started from."""
    remote_sha: str
    """The remote commit whose version of `file` did not merge."""
    side_file: str
    """Workspace-relative path of the remote's version."""
    diff: str
    remote_missing: bool = False
    """The remote deleted the file (its side file is then empty)."""
    held: bool = False
    local_only: list[str] = field(default_factory=list)
    """The lines only the local side had, over every merge that met this conflict."""
    remote_only: list[str] = field(default_factory=list)
    local_missing: bool = False
    """This side had deleted the file."""

    def joined(self, later: ConflictRecord) -> ConflictRecord:
        """This open conflict met again by a later merge: its lines and the later's, together."""
        return replace(
            later,
            local_sha=self.local_sha,
            local_only=_together(self.local_only, later.local_only),
            remote_only=_together(self.remote_only, later.remote_only),
            local_missing=self.local_missing and later.local_missing,
        )


def _together(first: list[str], second: list[str]) -> list[str]:
    return list(dict.fromkeys([*first, *second]))


def _stem(file: str) -> str:
    return file.replace("/", "__")


def save_conflict(root: Path, record: ConflictRecord, remote_text: bytes) -> None:
    """Write the remote's version and the record (replacing an older one for the same file)."""
    folder = root / CONFLICTS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    write_atomically(root / record.side_file, remote_text)
    write_atomically(folder / f"{_stem(record.file)}.json", json.dumps(asdict(record), indent=2))


def side_file_for(file: str) -> str:
    """Where the remote's version of `file` is kept while its conflict is open."""
    return f"{CONFLICTS_DIR}/{_stem(file)}.remote"


def open_conflicts(root: Path) -> list[ConflictRecord]:
    """Every open conflict, by file name."""
    folder = root / CONFLICTS_DIR
    records = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            data: Any = json.loads(path.read_text(encoding="utf-8"))
            records.append(ConflictRecord(**data))
        except (OSError, ValueError, TypeError):
            continue  # a torn record: its side file is still there for a human
    return records


def find_conflict(root: Path, file: str) -> ConflictRecord | None:
    """The open conflict of `file`, if any."""
    return next((record for record in open_conflicts(root) if record.file == file), None)


def close_conflict(root: Path, record: ConflictRecord) -> None:
    """Remove a settled conflict's record and side file."""
    (root / CONFLICTS_DIR / f"{_stem(record.file)}.json").unlink(missing_ok=True)
    (root / record.side_file).unlink(missing_ok=True)


def parse_time(value: str | None) -> datetime | None:
    """An ISO 8601 time from the state file, or None."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


class Backoff:
    """The delays between retries of an offline sync: 5 s, 10 s, 20 s, … capped at 5 minutes.

    `next_delay()` gives the wait before the next attempt and doubles the one after it;
    `reset()` after a sync that reached the remote.
    """

    def __init__(self, first_s: float = 5.0, cap_s: float = 300.0) -> None:
        self.first_s = first_s
        self.cap_s = cap_s
        self._next = first_s

    def next_delay(self) -> float:
        """The wait before the next attempt."""
        delay = min(self._next, self.cap_s)
        self._next = min(self._next * 2, self.cap_s)
        return delay

    def reset(self) -> None:
        """Start again from the first delay."""
        self._next = self.first_s

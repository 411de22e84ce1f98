"""Dreaming's machine state in `.cairn/dreams/`: every proposal and what became of it, what was
rejected (by content, so it does not come back), and what dreaming itself wrote (so it is never
proposed). Derived and git-ignored: DREAMS.md and the commits are the record for people.

`proposals.json` is read and written whole, atomically, under `state.lock`; a sweep holds
`sweep.lock` (never waiting) so a second process cannot sweep at the same time.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from shell.events import Proposal, decode
from shell.fsio import exclusive_lock, write_atomically

FORMAT_VERSION = 1
MAX_DECIDED = 500
"""Decided proposals kept (the oldest decisions go; rejected content is kept apart)."""
MAX_OPEN = 30
"""Open proposals kept; past this the oldest become stale."""
MAX_REMEMBERED = 4000
"""Rejected keys and dreamed lines kept, the most recent."""

Status = Literal["open", "accepted", "rejected", "stale"]


@dataclass(frozen=True)
class Record:
    """A proposal and what became of it."""

    proposal: Proposal
    status: Status
    created: str
    """When it was first proposed (ISO)."""
    decided: str | None = None
    commit: str | None = None
    text: str | None = None
    """The text accepted, when a person edited it."""
    keys: list[str] = field(default_factory=list)
    """The hit log's keys (path#hash) of the note units it comes from, remembered with the
    decision so the same source is not proposed again."""


@dataclass
class DreamState:
    records: dict[str, Record] = field(default_factory=dict)
    rejected: list[str] = field(default_factory=list)
    """Source keys and normalized texts of rejected proposals."""
    accepted: list[str] = field(default_factory=list)
    """Source keys of accepted proposals."""
    dreamed: list[str] = field(default_factory=list)
    """Normalized lines dreaming wrote: its diary, its counts, a model's distilled texts."""

    def open(self) -> list[Record]:
        return [record for record in self.records.values() if record.status == "open"]

    def remember(self, attribute: Literal["rejected", "accepted", "dreamed"], *keys: str) -> None:
        values: list[str] = getattr(self, attribute)
        values[:] = [v for v in values if v not in keys] + [k for k in dict.fromkeys(keys) if k]
        del values[:-MAX_REMEMBERED]

    def bounded(self) -> None:
        open_ = [r for r in self.records.values() if r.status == "open"]
        for record in open_[:-MAX_OPEN]:
            self.records[record.proposal.id] = replace(record, status="stale")
        decided = [r for r in self.records.values() if r.status != "open"]
        for record in decided[:-MAX_DECIDED]:
            del self.records[record.proposal.id]


class StateStore:
    """`proposals.json` and the locks beside it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._file = folder / "proposals.json"

    def read(self) -> DreamState:
        try:
            raw = self._file.read_text(encoding="utf-8")
        except FileNotFoundError:
            return DreamState()
        try:
            return _loads(raw)
        except (ValueError, KeyError, TypeError):
            aside = self._file.with_name(f"proposals.json.corrupt-{os.getpid()}")
            os.replace(self._file, aside)
            return DreamState()

    @contextlib.contextmanager
    def editing(self) -> Iterator[DreamState]:
        """The state, read under the lock and written back when the block ends without error."""
        with exclusive_lock(self.folder / "state.lock"):
            state = self.read()
            yield state
            state.bounded()
            write_atomically(self._file, _dumps(state), mode=0o600)

    @contextlib.contextmanager
    def sweeping(self) -> Iterator[None]:
        """Hold the sweep lock; raises `LockBusy` at once when another sweep holds it."""
        with exclusive_lock(self.folder / "sweep.lock", wait=False):
            yield


def _dumps(state: DreamState) -> str:
    payload: dict[str, Any] = {
        "version": FORMAT_VERSION,
        "records": [asdict(record) for record in state.records.values()],
        "rejected": state.rejected,
        "accepted": state.accepted,
        "dreamed": state.dreamed,
    }
    return json.dumps(payload, ensure_ascii=False, indent=1)


def _loads(raw: str) -> DreamState:
    data = json.loads(raw)
    if data.get("version") != FORMAT_VERSION:
        raise ValueError("unexpected dream state layout")
    records = [decode(Record, item) for item in data["records"]]
    return DreamState(
        records={record.proposal.id: record for record in records},
        rejected=[str(k) for k in data["rejected"]],
        accepted=[str(k) for k in data["accepted"]],
        dreamed=[str(k) for k in data["dreamed"]],
    )

"""Dreaming's machine state in `.cairn/dreams/`: every proposal and what became of it, what was
rejected (by content, so it does not come back), and what dreaming itself wrote (so it is never
proposed). Derived and git-ignored: DREAMS.md and the commits are the record for people.

`proposals.json` is read and written whole, atomically, under `state.lock`; a sweep holds
`sweep.lock` (never waiting) so a second process cannot sweep at the same time. A record that
cannot be read is skipped, a file of another layout is moved aside, each said (`take_notices`).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from shell.events import Notice, Proposal, decode
from shell.fsio import exclusive_lock, write_atomically

FORMAT_VERSION = 1
MAX_DECIDED = 500
"""Decided proposals kept (the oldest decisions go; rejected content is kept apart)."""
MAX_OPEN = 30
"""Open proposals at most: a sweep proposes no more than the queue has room for, and what it
holds back stays a candidate for a later sweep. (Expiring the oldest instead hid the
best-scored ones, which were then proposed again every sweep without being shown.)"""
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
        decided = [r for r in self.records.values() if r.status != "open"]
        for record in decided[:-MAX_DECIDED]:
            del self.records[record.proposal.id]


class StateStore:
    """`proposals.json` and the locks beside it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._file = folder / "proposals.json"
        self._notices: list[Notice] = []

    def take_notices(self) -> list[Notice]:
        """What reading the state skipped or set aside since last asked, said once."""
        notices, self._notices = self._notices, []
        return notices

    def read(self) -> DreamState:
        try:
            raw = self._file.read_text(encoding="utf-8")
        except FileNotFoundError:
            return DreamState()
        try:
            state, skipped = _loads(raw)
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            aside = self._file.with_name(f"proposals.json.corrupt-{os.getpid()}")
            os.replace(self._file, aside)
            self._say(f"Set aside dreaming's state ({error}) as {aside.name}; it starts afresh")
            return DreamState()
        if skipped:
            self._say(f"Skipped {skipped} unreadable proposal record(s) of dreaming's state")
        return state

    def _say(self, message: str) -> None:
        if all(notice.message != message for notice in self._notices):
            self._notices.append(Notice(message, level="warning"))

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


def _loads(raw: str) -> tuple[DreamState, int]:
    """The state, and how many of its records could not be read (skipped)."""
    data = json.loads(raw)
    if not isinstance(data, dict) or data.get("version") != FORMAT_VERSION:
        raise ValueError("unexpected dream state layout")
    lists = {name: data[name] for name in ("records", "rejected", "accepted", "dreamed")}
    if not all(isinstance(value, list) for value in lists.values()):
        raise ValueError("unexpected dream state layout")
    records: list[Record] = []
    for item in lists["records"]:
        try:
            records.append(_record(item))
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
    state = DreamState(
        records={record.proposal.id: record for record in records},
        rejected=[str(k) for k in lists["rejected"]],
        accepted=[str(k) for k in lists["accepted"]],
        dreamed=[str(k) for k in lists["dreamed"]],
    )
    return state, len(lists["records"]) - len(records)


def _record(item: Any) -> Record:
    record = decode(Record, item)
    if (
        not isinstance(record, Record)
        or not isinstance(record.proposal, Proposal)
        or record.status not in get_args(Status)
    ):
        raise TypeError("not a proposal record")
    if not isinstance(record.proposal.id, str) or not isinstance(record.proposal.text, str):
        raise TypeError("not a proposal record")
    return record

"""The hit log: which units of memory `memory_search` surfaced, when, for which query, how well.

Dreaming reads it to find what keeps being recalled. Recording sits on every search's path, so
it is one appended JSON line per search in `<workspace>/.cairn/dreams/recall.log`, under a shared
`flock` and without an fsync (5.7 ms p50 per search when every search rewrote and fsynced a
JSON store; see bench/README.md for today's figure). A crash can lose the last records: recall
feeds dreaming, and a lost record costs one recall, never a memory.

`fold` (run by a dreaming sweep) merges the log into the bounded store `recall.json` under the
exclusive lock. The log is renamed to a pending file first and deleted only after the store that
holds it is written, and the store lists the pending files it folded, so a kill at any point
neither loses nor double-counts a search. A torn line (a kill mid-append) is skipped; a record
or a stored unit of the wrong shape or types is dropped at the fold, and a store of the wrong
layout is moved aside, each said once (`take_notices`): never a crash of a search or a sweep,
nor a bad record that fails every sweep after it.

A unit is known by its file and the hash of its text (`SearchHit.unit`), not by its line
numbers, so a unit keeps its recalls when lines above it move.

Record shape (one line per search; `best` is the best relevance among its hits)::

    {"at": "<iso>", "q": "<query hash>", "best": 0.74,
     "hits": [["memory/2026-11-30.md", 3, 3, "<hash12>", 0.61]]}
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import unicodedata
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from shell.events import Notice, SearchHit
from shell.fsio import exclusive_lock, shared_lock, write_atomically
from shell.secrets.door import private_folder

FORMAT_VERSION = 2
MAX_UNITS = 4096
"""Units the store keeps; past this, the least recently recalled go."""
MAX_RECALLS_PER_UNIT = 32
"""Recalls kept per unit, the most recent (dreaming's signals saturate well below this)."""
MAX_FOLDED_IDS = 16
QUERY_HASH_CHARS = 12


def dreams_dir(workspace: Path) -> Path:
    """Where a workspace keeps dreaming's machine state (git-ignored, under `.cairn`)."""
    return workspace / ".cairn" / "dreams"


def query_hash(query: str) -> str:
    """A short sha1 of the query after NFC normalisation, lowercasing and whitespace collapsing:
    two wordings of one question count as one query only when they are the same words."""
    normalised = " ".join(unicodedata.normalize("NFC", query).lower().split())
    return hashlib.sha1(normalised.encode("utf-8")).hexdigest()[:QUERY_HASH_CHARS]


@dataclass(frozen=True)
class Recall:
    """One time a unit was surfaced."""

    at: str
    """When, as the injected clock's ISO timestamp (its date part is the local day)."""
    query: str
    """The query's hash (`query_hash`)."""
    score: float
    """The hit's relevance."""
    best: float
    """The best relevance of any hit of that search: a hit far below it was a weak second
    answer, not what the search was about."""

    @property
    def day(self) -> str:
        return self.at[:10]


@dataclass(frozen=True)
class RecalledUnit:
    """A unit of a memory file and its recalls (oldest first, at most MAX_RECALLS_PER_UNIT)."""

    path: str
    unit_hash: str
    """The first 12 hex digits of the unit's chunk hash; "" when the search did not say."""
    start_line: int
    """Where the unit was when last recalled (lines can move; the hash cannot)."""
    end_line: int
    recalls: tuple[Recall, ...]

    @property
    def key(self) -> str:
        return f"{self.path}#{self.unit_hash or f'L{self.start_line}-L{self.end_line}'}"


class HitLog:
    """Records every hit surfaced to the model, and folds the records for dreaming.

    Args:
        folder: The dreams folder, usually `dreams_dir(workspace)`.
        clock: The current time (injected for determinism).
    """

    def __init__(self, folder: Path, clock: Callable[[], datetime]) -> None:
        self._folder = folder
        self._log = folder / "recall.log"
        self._store = folder / "recall.json"
        self._lock = folder / "recall.lock"
        self._clock = clock
        self._thread_lock = threading.Lock()  # flock is per open file; this orders our threads
        self._notices: list[Notice] = []

    def take_notices(self) -> list[Notice]:
        """What the last folds dropped or set aside, said once."""
        notices, self._notices = self._notices, []
        return notices

    @property
    def folder(self) -> Path:
        return self._folder

    def record(self, query: str, hits: Sequence[SearchHit]) -> None:
        """Append one search's hits (nothing for a search that surfaced none)."""
        if not hits:
            return
        record = {
            "at": self._clock().isoformat(),
            "q": query_hash(query),
            "best": round(max(hit.score for hit in hits), 4),
            "hits": [_row(hit) for hit in hits],
        }
        line = json.dumps(record, ensure_ascii=False)
        data = f"\n{line}\n".encode()  # the leading newline ends a line a kill left torn
        private_folder(self._folder)
        with self._thread_lock, shared_lock(self._lock):
            descriptor = os.open(
                self._log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600
            )
            try:
                os.write(descriptor, data)  # one write: appends of other processes never interleave
            finally:
                os.close(descriptor)

    def recalled(self) -> list[RecalledUnit]:
        """Every unit recalled so far, the store and the records not yet folded, without
        changing anything (most recently recalled last)."""
        if not self._folder.is_dir():
            return []
        with self._thread_lock, exclusive_lock(self._lock):
            units, folded = self._read_store()
            for _, lines in self._pending(folded):
                _merge(units, lines)
            _merge(units, _read_lines(self._log))
        return _as_units(units)

    def fold(self) -> list[RecalledUnit]:
        """Merge the log into the store, bounded, and return what `recalled` would."""
        if not self._folder.is_dir():
            return []
        with self._thread_lock, exclusive_lock(self._lock):
            units, folded = self._read_store(say=True)
            pending = list(self._pending(folded))
            if self._log.exists():
                target = self._folder / f"recall.{uuid.uuid4().hex[:12]}.pending"
                os.replace(self._log, target)
                pending.append((target, _read_lines(target)))
            if dropped := sum(_wrong_records(lines) for _, lines in pending):
                self._say(f"Dropped {dropped} record(s) of the wrong shape from the hit log")
            for _, lines in pending:
                _merge(units, lines)
            units = _bounded(units)
            folded = [*folded, *(_pending_id(path) for path, _ in pending)][-MAX_FOLDED_IDS:]
            payload = {"version": FORMAT_VERSION, "folded": folded, "units": units}
            write_atomically(self._store, json.dumps(payload, ensure_ascii=False), mode=0o600)
            for path in self._folder.glob("recall.*.pending"):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
        return _as_units(units)

    # --- internals -------------------------------------------------------------------------

    def _pending(self, folded: Sequence[str]) -> Iterator[tuple[Path, list[dict[str, Any]]]]:
        """Pending files a killed fold left: those the store already holds are only deleted."""
        for path in sorted(self._folder.glob("recall.*.pending")):
            if _pending_id(path) in folded:
                continue
            yield path, _read_lines(path)

    def _say(self, message: str) -> None:
        self._notices.append(
            Notice(
                f"{message} ({self._folder.name}/); dreaming goes on without them", level="warning"
            )
        )

    def _read_store(self, *, say: bool = False) -> tuple[dict[str, dict[str, Any]], list[str]]:
        try:
            raw = self._store.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}, []
        try:
            data = json.loads(raw)
            if not isinstance(data, dict) or data.get("version") != FORMAT_VERSION:
                raise ValueError("unexpected recall store layout")
            units, folded = data["units"], data["folded"]
            if not isinstance(units, dict) or not isinstance(folded, list):
                raise ValueError("unexpected recall store layout")
        except (ValueError, KeyError, TypeError):
            aside = self._move_aside()
            self._say(f"Set aside the recall store {self._store.name} as {aside}: unreadable")
            return {}, []
        good = {key: entry for key, entry in units.items() if _good_entry(entry)}
        if say and len(good) < len(units):
            self._say(f"Dropped {len(units) - len(good)} unit(s) of the wrong shape from the store")
        return good, [str(name) for name in folded]

    def _move_aside(self) -> str:
        stamp = self._clock().strftime("%Y%m%dT%H%M%S")
        target = self._store.with_name(f"{self._store.name}.corrupt-{stamp}")
        counter = 1
        while target.exists():
            counter += 1
            target = self._store.with_name(f"{self._store.name}.corrupt-{stamp}-{counter}")
        os.replace(self._store, target)
        return target.name


def _row(hit: SearchHit) -> list[Any]:
    path, start, end, unit_hash = hit.path, hit.start_line, hit.end_line, ""
    if hit.unit:
        path, start_text, end_text, unit_hash = hit.unit.rsplit(":", 3)
        start, end = int(start_text), int(end_text)
    return [path, start, end, unit_hash, round(hit.score, 4)]


def _pending_id(path: Path) -> str:
    return path.name.removeprefix("recall.").removesuffix(".pending")


def _read_lines(path: Path) -> list[dict[str, Any]]:
    """The records of a log file; a torn or foreign line is skipped."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return []
    records = []
    for line in raw.splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            continue
        records.append(record if _good_record(record) else {_WRONG: True})
    return records


_WRONG = "wrong"
"""The mark of a parsed line of the wrong shape, kept to be counted (`_wrong_records`)."""


def _wrong_records(records: list[dict[str, Any]]) -> int:
    return sum(1 for record in records if _WRONG in record)


def _merge(units: dict[str, dict[str, Any]], records: Iterable[dict[str, Any]]) -> None:
    """Add each record's hits to `units` (key → entry; dict order is recall order)."""
    for record in records:
        if _WRONG in record:
            continue
        recall = [str(record["at"]), str(record["q"])]
        best = float(record.get("best") or 0.0)
        for row in record["hits"]:
            try:
                path, start, end, unit_hash, score = row
                key = f"{path}#{unit_hash or f'L{int(start)}-L{int(end)}'}"
                entry = units.pop(key, None) or {"path": str(path), "hash": str(unit_hash)}
                entry["lines"] = [int(start), int(end)]
                made = [*recall, float(score), max(best, float(score))]
                entry["recalls"] = [*entry.get("recalls", ()), made][-MAX_RECALLS_PER_UNIT:]
                units[key] = entry  # re-inserted: the most recently recalled come last
            except (ValueError, TypeError):
                continue


def _bounded(units: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The MAX_UNITS most recently recalled, by the time of their last recall (the order of
    the records is not the order of time when processes' clocks or a fold's files interleave)."""
    if len(units) <= MAX_UNITS:
        return units
    latest = sorted(units.items(), key=lambda item: _moment(item[1]["recalls"][-1][0]))
    return dict(latest[-MAX_UNITS:])


def _moment(stamp: str) -> datetime:
    moment = datetime.fromisoformat(stamp)
    return moment if moment.tzinfo is not None else moment.astimezone()


def _as_units(units: dict[str, dict[str, Any]]) -> list[RecalledUnit]:
    return [
        RecalledUnit(
            path=entry["path"],
            unit_hash=entry["hash"],
            start_line=entry["lines"][0],
            end_line=entry["lines"][1],
            recalls=tuple(Recall(*recall) for recall in entry["recalls"]),
        )
        for entry in units.values()
    ]


def _good_record(record: Any) -> bool:
    """A search's record as `HitLog.record` writes it (each hit row is checked as it merges)."""
    return (
        isinstance(record, dict)
        and _moment_or_none(record.get("at")) is not None
        and isinstance(record.get("q"), str)
        and _number(record.get("best", 0.0))
        and isinstance(record.get("hits"), list)
    )


def _good_entry(entry: Any) -> bool:
    """A unit of the store as `fold` writes it."""
    if not isinstance(entry, dict):
        return False
    lines, recalls = entry.get("lines"), entry.get("recalls")
    return (
        isinstance(entry.get("path"), str)
        and isinstance(entry.get("hash"), str)
        and isinstance(lines, list)
        and len(lines) == 2
        and all(isinstance(n, int) and not isinstance(n, bool) for n in lines)
        and isinstance(recalls, list)
        and bool(recalls)
        and all(
            isinstance(r, list)
            and len(r) == 4
            and _moment_or_none(r[0]) is not None
            and isinstance(r[1], str)
            and _number(r[2])
            and _number(r[3])
            for r in recalls
        )
    )


def _number(value: Any) -> bool:
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool))


def _moment_or_none(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None

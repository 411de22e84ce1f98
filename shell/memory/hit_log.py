"""The hit log: which memory lines memory_search surfaced, how often, for which queries.

Dreaming reads this later to find what keeps being recalled. The store is operational data in
`<workspace>/.cairn/dreams/recall.json` (derived, git-ignored). It is bounded, written atomically,
serialised across threads and processes with an exclusive `flock`, and a corrupt file is moved
aside rather than crashing a search.

File shape::

    {"version": 1, "entries": {"memory/2026-11-30.md:3:9": {
        "path": "memory/2026-11-30.md", "start_line": 3, "end_line": 9,
        "recall_count": 4, "query_hashes": ["<sha1>", ...], "days": ["2026-11-30", ...],
        "best_score": 0.71, "total_score": 2.5, "first_seen": "<iso>", "last_seen": "<iso>",
        "snippet": "..."}}}
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shell.fsio import exclusive_lock, write_atomically

if TYPE_CHECKING:
    from shell.memory.search_result import SearchHit

FORMAT_VERSION = 1
MAX_ENTRIES = 512
MAX_QUERY_HASHES = 32
MAX_DAYS = 16
MAX_SNIPPET_CHARS = 800


def recall_path(workspace: Path) -> Path:
    """Where a workspace keeps its recall store."""
    return workspace / ".cairn" / "dreams" / "recall.json"


def query_hash(query: str) -> str:
    """sha1 of the query after NFC normalisation, lowercasing and whitespace collapsing."""
    normalised = " ".join(unicodedata.normalize("NFC", query).lower().split())
    return hashlib.sha1(normalised.encode("utf-8")).hexdigest()


def hit_key(path: str, start_line: int, end_line: int) -> str:
    return f"{path}:{start_line}:{end_line}"


class HitLog:
    """Records every hit surfaced to the model.

    Args:
        path: the JSON store, usually `recall_path(workspace)`.
        clock: the current time (injected for determinism).
    """

    def __init__(self, path: Path, clock: Callable[[], datetime]) -> None:
        self._path = path
        self._lock_path = path.with_name(path.name + ".lock")
        self._clock = clock
        self._thread_lock = threading.Lock()  # flock is per open file; this orders our threads

    @property
    def path(self) -> Path:
        return self._path

    def record(self, query: str, hits: Sequence[SearchHit]) -> None:
        """Add one search's hits: bump counts, remember the query hash, today and the scores."""
        if not hits:
            return
        now = self._clock()
        stamp = now.isoformat()
        day = now.date().isoformat()
        qhash = query_hash(query)
        with self._locked():
            entries = self._read()
            for hit in hits:
                key = hit_key(hit.path, hit.start_line, hit.end_line)
                entry = entries.get(key) or {
                    "path": hit.path,
                    "start_line": hit.start_line,
                    "end_line": hit.end_line,
                    "recall_count": 0,
                    "query_hashes": [],
                    "days": [],
                    "best_score": 0.0,
                    "total_score": 0.0,
                    "first_seen": stamp,
                }
                entry["recall_count"] += 1
                entry["query_hashes"] = _bounded_append(
                    entry["query_hashes"], qhash, MAX_QUERY_HASHES
                )
                entry["days"] = _bounded_append(entry["days"], day, MAX_DAYS)
                entry["best_score"] = max(float(entry["best_score"]), hit.score)
                entry["total_score"] = float(entry["total_score"]) + hit.score
                entry["last_seen"] = stamp
                entry["snippet"] = hit.snippet[:MAX_SNIPPET_CHARS]
                entries.pop(key, None)
                entries[key] = entry  # re-insert: dict order is then least → most recent
            self._write(_evict(entries))

    def entries(self) -> dict[str, dict[str, Any]]:
        """A snapshot of the store: hit key (`path:start:end`) → entry dict."""
        with self._locked():
            return self._read()

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with self._thread_lock, exclusive_lock(self._lock_path):
            yield

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            raw = self._path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        try:
            data = json.loads(raw)
            entries = data["entries"]
            if data.get("version") != FORMAT_VERSION or not isinstance(entries, dict):
                raise ValueError("unexpected recall store layout")
            for entry in entries.values():
                _check_entry(entry)
        except (ValueError, KeyError, TypeError) as error:
            self._move_aside(error)
            return {}
        return entries

    def _move_aside(self, error: Exception) -> None:
        stamp = self._clock().strftime("%Y%m%dT%H%M%S")
        target = self._path.with_name(f"{self._path.name}.corrupt-{stamp}")
        counter = 1
        while target.exists():
            counter += 1
            target = self._path.with_name(f"{self._path.name}.corrupt-{stamp}-{counter}")
        os.replace(self._path, target)

    def _write(self, entries: dict[str, dict[str, Any]]) -> None:
        payload = json.dumps({"version": FORMAT_VERSION, "entries": entries}, ensure_ascii=False)
        write_atomically(self._path, payload, mode=0o600)  # private, as it has always been


def _bounded_append(values: list[str], value: str, limit: int) -> list[str]:
    """`values` with `value` moved to the end, keeping the `limit` most recent."""
    kept = [v for v in values if v != value]
    kept.append(value)
    return kept[-limit:]


def _evict(entries: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Keep the MAX_ENTRIES most recently recalled (dict order is recall order, see `record`)."""
    if len(entries) <= MAX_ENTRIES:
        return entries
    return dict(list(entries.items())[-MAX_ENTRIES:])


def _check_entry(entry: Any) -> None:
    if not isinstance(entry, dict):
        raise TypeError("recall entry is not an object")
    for name, kind in (
        ("path", str),
        ("start_line", int),
        ("end_line", int),
        ("recall_count", int),
        ("query_hashes", list),
        ("days", list),
        ("best_score", (int, float)),
        ("total_score", (int, float)),
    ):
        if not isinstance(entry.get(name), kind):
            raise TypeError(f"recall entry field {name!r} is missing or malformed")

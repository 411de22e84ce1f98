"""Forgetting in the workspace's operational data under `.cairn/` (git-ignored, not synced).

Transcripts, traces, the dream state and anything else there that is text: each forgotten
line's words, wherever they stand (any case, any spacing), become `[forgotten]`; in a JSON file
a record or list item that holds them is dropped whole instead (a dream proposal of the line
is no proposal of anything). The dreaming vector cache keeps vectors by text it no longer
knows, so it goes whole (a sweep rebuilds it). The hit log holds no text: its units of a
changed file whose lines held a forgotten one go. The search index is the caller's
(`shell.forget`): rebuilt, or, where no index is open, removed when it holds the text.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shell.fsio import exclusive_lock, write_atomically
from shell.memory.forget.tombstones import normal_form

STATE_DIR = ".cairn"
MARKER = "[forgotten]"
_INDEX = "index"
_LOCKS = "locks"
_VECTORS = Path("dreams") / "vectors.npz"
_HIT_STORE = Path("dreams") / "recall.json"
_HIT_LOGS = ("recall.log", "recall.*.pending")
_TRANSCRIPTS = ("sessions", "traces")
MAX_FILE_BYTES = 64_000_000


@dataclass
class Scrubbed:
    """What went from `.cairn/`."""

    transcripts: int = 0
    """Files of sessions and traces that held a forgotten line (now marked)."""
    dream_entries: int = 0
    """Dream state records and list items dropped, and the vector cache if it went."""
    hit_log_entries: int = 0
    other_files: int = 0
    index_removed: bool = False


def pattern(spans: Iterable[str]) -> re.Pattern[str] | None:
    """What finds any of `spans` (normal forms) in text: its words, any case, any spacing."""
    alternatives = sorted(
        {r"\s+".join(re.escape(word) for word in span.split()) for span in spans if span},
        key=len,
        reverse=True,
    )
    return re.compile("|".join(alternatives), re.IGNORECASE) if alternatives else None


def scrub_state(
    root: Path, spans: Iterable[str], spots: Mapping[str, set[int]], *, index: bool = True
) -> Scrubbed:
    """Take the forgotten `spans` out of `root/.cairn/`; `spots` are the changed memory files
    and the lines (1-based, before the change) that held them. With `index`, an index folder
    whose files hold the text is removed (it is rebuilt from the files at its next opening)."""
    found = pattern(spans)
    done = Scrubbed()
    state = root / STATE_DIR
    if found is None or not state.is_dir():
        return done
    done.hit_log_entries = _hit_log(state / "dreams", spots)
    vectors = state / _VECTORS
    if vectors.exists():
        vectors.unlink()
        done.dream_entries += 1
    for path in sorted(state.rglob("*")):
        relative = path.relative_to(state)
        if not path.is_file() or path.is_symlink() or relative.parts[0] in (_INDEX, _LOCKS):
            continue
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                continue
            text = path.read_bytes().decode("utf-8", "surrogateescape")
        except OSError:
            continue
        if not found.search(text):
            continue
        if path.suffix == ".json":
            new, dropped = _json_without(text, found)
        else:
            new, dropped = found.sub(MARKER, text), 1
        write_atomically(path, new.encode("utf-8", "surrogateescape"))
        if relative.parts[0] in _TRANSCRIPTS:
            done.transcripts += 1
        elif relative.parts[0] == "dreams":
            done.dream_entries += dropped
        else:
            done.other_files += 1
    if index:
        done.index_removed = _remove_index(state / _INDEX, found)
    return done


def index_holds(folder: Path, spans: Iterable[str]) -> bool:
    """Whether any file of the index folder holds one of `spans`' words as stored text."""
    found = pattern(spans)
    return found is not None and _index_holds(folder, found)


def _index_holds(folder: Path, found: re.Pattern[str]) -> bool:
    for path in folder.rglob("*") if folder.is_dir() else []:
        if path.is_file() and found.search(path.read_bytes().decode("latin-1")):
            return True
    return False


def _remove_index(folder: Path, found: re.Pattern[str]) -> bool:
    if not _index_holds(folder, found):
        return False
    shutil.rmtree(folder, ignore_errors=True)
    return True


def _json_without(text: str, found: re.Pattern[str]) -> tuple[str, int]:
    """The JSON `text` without the records and list items that hold `found` (a file that is
    not JSON has the words marked instead)."""
    try:
        data = json.loads(text)
    except ValueError:
        return found.sub(MARKER, text), 1
    dropped = [0]

    def holds(value: Any) -> bool:
        return bool(found.search(json.dumps(value, ensure_ascii=False)))

    def walk(value: Any, depth: int) -> Any:
        """A record is an item of a collection the file's top object holds (or of the top
        list itself): it goes whole; deeper, the words are marked."""
        record = depth == 1 or (depth == 0 and isinstance(value, list))
        if isinstance(value, dict):
            kept = {}
            for key, item in value.items():
                if record and holds(item):
                    dropped[0] += 1
                    continue
                kept[key] = walk(item, depth + 1)
            return kept
        if isinstance(value, list):
            kept_items = []
            for item in value:
                if record and holds(item):
                    dropped[0] += 1
                    continue
                kept_items.append(walk(item, depth + 1))
            return kept_items
        if isinstance(value, str):
            return found.sub(MARKER, value)
        return value

    return json.dumps(walk(data, 0), ensure_ascii=False, indent=2), max(dropped[0], 1)


def _hit_log(folder: Path, spots: Mapping[str, set[int]]) -> int:
    """Drop the hit log's units and hits on the lines that held a forgotten one."""
    if not spots or not folder.is_dir():
        return 0

    def covers(path: object, start: object, end: object) -> bool:
        lines = spots.get(str(path), set())
        return (
            isinstance(start, int)
            and isinstance(end, int)
            and any(start <= n <= end for n in lines)
        )

    dropped = 0
    with exclusive_lock(folder / "recall.lock"):
        store = folder / _HIT_STORE.name
        try:
            data = json.loads(store.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = None
        if isinstance(data, dict) and isinstance(data.get("units"), dict):
            units = data["units"]
            gone = [
                key
                for key, unit in units.items()
                if isinstance(unit, dict)
                and isinstance(unit.get("lines"), list)
                and len(unit["lines"]) == 2
                and covers(unit.get("path"), *unit["lines"])
            ]
            for key in gone:
                del units[key]
            if gone:
                dropped += len(gone)
                write_atomically(store, json.dumps(data, ensure_ascii=False), mode=0o600)
        for name in _HIT_LOGS:
            for log in sorted(folder.glob(name)):
                dropped += _hit_log_file(log, covers)
    return dropped


def _hit_log_file(log: Path, covers: Any) -> int:
    dropped = 0
    kept: list[str] = []
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            kept.append(line)
            continue
        hits = record.get("hits") if isinstance(record, dict) else None
        if isinstance(hits, list):
            left = [h for h in hits if not (isinstance(h, list) and len(h) >= 3 and covers(*h[:3]))]
            dropped += len(hits) - len(left)
            if not left:
                continue
            record["hits"] = left
            line = json.dumps(record, ensure_ascii=False)
        kept.append(line)
    if dropped:
        write_atomically(log, "".join(f"{line}\n" for line in kept).encode(), mode=0o600)
    return dropped


def scrub_messages(messages: list[dict[str, Any]], line: str) -> int:
    """Mark the forgotten `line` wherever a live conversation's messages hold it (their text,
    their calls' arguments); how many messages changed."""
    found = pattern([normal_form(line)])
    if found is None:
        return 0
    changed = 0
    for message in messages:
        before = json.dumps(message, ensure_ascii=False)
        content = message.get("content")
        if isinstance(content, str):
            message["content"] = found.sub(MARKER, content)
        for call in message.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and isinstance(function.get("arguments"), str):
                function["arguments"] = found.sub(MARKER, function["arguments"])
        changed += json.dumps(message, ensure_ascii=False) != before
    return changed

"""Sessions survive restarts and crashes: counters, transcript, and compactions replayed."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from shell.events import CompactionFinished
from shell.lifecycle.compaction import CompactionResult, compaction_entry
from shell.messages import is_summary_message, summary_message
from shell.session.record import FlushCycle, SessionRecord
from shell.session.store import SessionNotFound, SessionStore

START = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)


def ticking_clock() -> Callable[[], datetime]:
    minutes = itertools.count()
    return lambda: START + timedelta(minutes=next(minutes))


def store(tmp_path: Path, clock: Callable[[], datetime] | None = None) -> SessionStore:
    tokens = itertools.count()
    return SessionStore(
        tmp_path / ".cairn", clock or ticking_clock(), token=lambda: f"{next(tokens):06x}"
    )


def message(n: int, role: str = "user") -> dict[str, object]:
    return {"role": role, "content": f"message {n}"}


def test_counters_survive_a_restart(tmp_path: Path) -> None:
    first = store(tmp_path)
    record = first.create("cairn-demo/brain")
    assert record.needs_prelude is True
    record.turns = 7
    record.cycle = FlushCycle(2, 2, "2026-03-01T09:41:00+00:00", 1, "timeout: no answer", 14)
    record.prompt_tokens_total = 12_345
    record.completion_tokens_total = 678
    record.needs_reinjection = True
    first.save(record)

    restarted = store(tmp_path)  # a new process: nothing shared but the files
    loaded = restarted.load(record.session_id)
    assert loaded == record
    assert restarted.latest() == record
    assert list((tmp_path / ".cairn" / "sessions").glob("*.tmp")) == []


def test_record_file_is_private_to_its_owner(tmp_path: Path) -> None:
    sessions = store(tmp_path)
    record = sessions.create("m")
    sessions.save(record)
    path = tmp_path / ".cairn" / "sessions" / f"{record.session_id}.json"
    assert path.stat().st_mode & 0o777 == 0o600


def test_session_ids_are_short_and_sort_by_creation(tmp_path: Path) -> None:
    sessions = store(tmp_path)
    ids = [sessions.create("m").session_id for _ in range(3)]
    assert ids == sorted(ids)
    assert ids[0] == "20260301-093000-000000"
    assert len(set(ids)) == 3


def test_latest_is_the_most_recently_updated(tmp_path: Path) -> None:
    sessions = store(tmp_path)
    assert sessions.latest() is None
    older = sessions.create("m")
    newer = sessions.create("m")
    assert sessions.latest() == newer
    sessions.save(older)  # used again later: now it is the one to resume
    latest = sessions.latest()
    assert latest is not None and latest.session_id == older.session_id
    (sessions.folder / "junk.json").write_text("{not json", encoding="utf-8")
    assert sessions.latest() is not None


def test_the_session_a_start_opens(tmp_path: Path) -> None:
    sessions = store(tmp_path)
    assert sessions.opened(None, resume=True) is None  # nothing to resume: a new session
    older = sessions.create("m")
    newer = sessions.create("m")
    assert sessions.opened(None, resume=False) is None
    assert sessions.opened(None, resume=True) == newer
    named = sessions.opened(older.session_id, resume=True)  # a name wins over "the latest"
    assert named is not None and named.session_id == older.session_id
    with pytest.raises(SessionNotFound):
        sessions.opened("20990101-000000-abcdef", resume=False)


def test_load_unknown_or_hostile_ids(tmp_path: Path) -> None:
    sessions = store(tmp_path)
    with pytest.raises(SessionNotFound):
        sessions.load("20990101-000000-abcdef")
    with pytest.raises(SessionNotFound):
        sessions.load("../../etc/passwd")


def test_unknown_record_fields_are_ignored(tmp_path: Path) -> None:
    sessions = store(tmp_path)
    record = sessions.create("m")
    path = sessions.folder / f"{record.session_id}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["from_a_future_version"] = 1
    path.write_text(json.dumps(data), encoding="utf-8")
    assert sessions.load(record.session_id) == record


def test_messages_round_trip_and_bytes_grow(tmp_path: Path) -> None:
    sessions = store(tmp_path)
    sid = sessions.create("m").session_id
    assert sessions.messages(sid) == []
    assert sessions.transcript_bytes(sid) == 0
    tool_turn = [
        message(0),
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "memory_search", "arguments": '{"query": "ü"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "name": "memory_search", "content": "[]"},
        message(1, "assistant"),
    ]
    for m in tool_turn:
        sessions.append_message(sid, m)
    sessions.append(sid, {"kind": "event", "type": "usage_updated", "prompt_tokens": 9})
    assert sessions.messages(sid) == tool_turn
    assert sessions.transcript_bytes(sid) == (sessions.folder / f"{sid}.jsonl").stat().st_size > 0


def test_a_torn_last_line_is_tolerated_and_later_appends_survive(tmp_path: Path) -> None:
    sessions = store(tmp_path)
    sid = sessions.create("m").session_id
    sessions.append_message(sid, message(0))
    sessions.append_message(sid, message(1, "assistant"))
    transcript = sessions.folder / f"{sid}.jsonl"
    with open(transcript, "ab") as handle:  # the process died halfway through a write
        handle.write(b'{"kind": "message", "message": {"role": "user", "cont')
    assert sessions.messages(sid) == [message(0), message(1, "assistant")]

    restarted = store(tmp_path)
    restarted.append_message(sid, message(2))
    assert restarted.messages(sid) == [message(0), message(1, "assistant"), message(2)]


def _compaction(kept: list[dict[str, object]], summary: str) -> CompactionResult:
    receipt = CompactionFinished(
        trigger="manual",
        tokens_before=5000,
        tokens_after=900,
        turns_summarised=3,
        messages_kept=len(kept),
        duration_ms=1.0,
        summary=summary,
        compaction_count=1,
    )
    return CompactionResult(messages=[summary_message(summary), *kept], receipt=receipt)


def test_messages_after_compactions_are_summary_plus_tail(tmp_path: Path) -> None:
    sessions = store(tmp_path)
    sid = sessions.create("m").session_id
    live = [message(n, "user" if n % 2 == 0 else "assistant") for n in range(10)]
    for m in live:
        sessions.append_message(sid, m)
    first = _compaction(live[6:], "## Decisions\n- first")
    sessions.append(sid, compaction_entry(first))
    assert sessions.messages(sid) == first.messages

    more = [message(n, "user" if n % 2 == 0 else "assistant") for n in range(10, 14)]
    for m in more:
        sessions.append_message(sid, m)
    after_first = [*first.messages, *more]
    assert sessions.messages(sid) == after_first

    # The second compaction merges the first summary and keeps the last two messages.
    second = _compaction(after_first[-2:], "## Decisions\n- first\n- second")
    sessions.append(sid, compaction_entry(second))
    rebuilt = store(tmp_path).messages(sid)
    assert rebuilt == second.messages
    assert sum(is_summary_message(m) for m in rebuilt) == 1

    entry = sessions.entries(sid)[-1]
    assert entry["kind"] == "compaction"
    assert (entry["tokens_before"], entry["tokens_after"]) == (5000, 900)


def test_new_record_defaults(tmp_path: Path) -> None:
    record = store(tmp_path).create("openai/gpt-4o", prelude=False)
    assert record == SessionRecord(
        session_id=record.session_id,
        created_at="2026-03-01T09:30:00+00:00",
        updated_at="2026-03-01T09:30:00+00:00",
        model="openai/gpt-4o",
        needs_prelude=False,
    )
    assert record.cycle == FlushCycle() and not record.cycle.flushed()


def test_a_record_written_before_the_cycle_was_one_object_loads(tmp_path: Path) -> None:
    sessions = store(tmp_path)
    record = sessions.create("m")
    path = tmp_path / ".cairn" / "sessions" / f"{record.session_id}.json"
    data = json.loads(path.read_text())
    del data["cycle"]
    data |= {
        "compaction_count": 3,
        "memory_flush_compaction_count": 3,
        "memory_flush_at": None,
        "flush_failures": 1,
        "flush_last_error": "x",
    }
    path.write_text(json.dumps(data))
    assert sessions.load(record.session_id).cycle == FlushCycle(3, 3, None, 1, "x")

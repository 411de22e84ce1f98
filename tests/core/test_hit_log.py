from __future__ import annotations

import json
import multiprocessing
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

from shell.memory.hit_log import (
    MAX_DAYS,
    MAX_ENTRIES,
    MAX_QUERY_HASHES,
    HitLog,
    query_hash,
    recall_path,
)
from shell.memory.search import SearchHit

START = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


class SteppingClock:
    """A clock that moves forward by `step` on every reading."""

    def __init__(self, step: timedelta = timedelta(seconds=1)) -> None:
        self.now = START
        self.step = step

    def __call__(self) -> datetime:
        current = self.now
        self.now += self.step
        return current


def hit(path: str = "memory/2026-11-30.md", start: int = 1, end: int = 5, score: float = 0.5):
    return SearchHit(
        path=path,
        start_line=start,
        end_line=end,
        score=score,
        vector_score=score,
        text_score=0.0,
        snippet=f"text of {path}",
        citation=f"{path}#L{start}-L{end}",
    )


def test_records_counts_scores_queries_and_days(tmp_path: Path) -> None:
    tracker = HitLog(recall_path(tmp_path), SteppingClock(timedelta(hours=20)))
    tracker.record("Deploy procedure", [hit(score=0.4), hit("MEMORY.md", 3, 9, 0.9)])
    tracker.record("  deploy   PROCEDURE ", [hit(score=0.6)])
    tracker.record("who owns billing", [hit(score=0.5)])

    entries = tracker.entries()
    note = entries["memory/2026-11-30.md:1:5"]
    assert note["recall_count"] == 3
    assert note["best_score"] == 0.6
    assert note["total_score"] == 1.5
    assert note["query_hashes"] == [query_hash("deploy procedure"), query_hash("who owns billing")]
    assert note["days"] == ["2026-11-30", "2026-12-01", "2026-12-02"]
    assert note["first_seen"] < note["last_seen"]
    assert entries["MEMORY.md:3:9"]["recall_count"] == 1
    assert recall_path(tmp_path).is_file()
    assert tracker.path == tmp_path / ".cairn" / "dreams" / "recall.json"


def test_an_empty_hit_list_writes_nothing(tmp_path: Path) -> None:
    tracker = HitLog(recall_path(tmp_path), SteppingClock())
    tracker.record("anything", [])
    assert not recall_path(tmp_path).exists()
    assert tracker.entries() == {}


def test_store_is_bounded_and_evicts_the_least_recent(tmp_path: Path) -> None:
    tracker = HitLog(recall_path(tmp_path), SteppingClock())
    tracker.record("first", [hit("memory/keep.md", 1, 1)])
    tracker.record("batch", [hit(f"memory/n{i}.md", 1, 1) for i in range(MAX_ENTRIES)])
    tracker.record("again", [hit("memory/keep.md", 1, 1)])  # recalled again: most recent now
    tracker.record("more", [hit("memory/late.md", 1, 1)])

    entries = tracker.entries()
    assert len(entries) == MAX_ENTRIES
    assert "memory/keep.md:1:1" in entries
    assert "memory/late.md:1:1" in entries
    assert "memory/n0.md:1:1" not in entries  # the oldest two were evicted
    assert "memory/n1.md:1:1" not in entries
    assert "memory/n2.md:1:1" in entries


def test_query_hashes_and_days_are_bounded(tmp_path: Path) -> None:
    tracker = HitLog(recall_path(tmp_path), SteppingClock(timedelta(days=1)))
    for i in range(MAX_QUERY_HASHES + 8):
        tracker.record(f"query number {i}", [hit()])
    (entry,) = tracker.entries().values()
    assert entry["recall_count"] == MAX_QUERY_HASHES + 8
    assert len(entry["query_hashes"]) == MAX_QUERY_HASHES
    assert entry["query_hashes"][-1] == query_hash(f"query number {MAX_QUERY_HASHES + 7}")
    assert len(entry["days"]) == MAX_DAYS
    assert entry["days"][-1] == (START + timedelta(days=MAX_QUERY_HASHES + 7)).date().isoformat()


def test_concurrent_threads_lose_no_update(tmp_path: Path) -> None:
    trackers = [HitLog(recall_path(tmp_path), SteppingClock()) for _ in range(4)]

    def work(tracker: HitLog, worker: int) -> None:
        for i in range(15):
            tracker.record(f"q{worker}-{i}", [hit(), hit(f"memory/w{worker}.md", 1, 2)])

    threads = [threading.Thread(target=work, args=(t, n)) for n, t in enumerate(trackers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    entries = trackers[0].entries()
    assert entries["memory/2026-11-30.md:1:5"]["recall_count"] == 60
    assert all(entries[f"memory/w{n}.md:1:2"]["recall_count"] == 15 for n in range(4))


def _record_in_process(store: str, worker: int, rounds: int) -> None:
    tracker = HitLog(Path(store), SteppingClock())
    for i in range(rounds):
        tracker.record(f"p{worker}-{i}", [hit(), hit(f"memory/p{worker}.md", 1, 2)])


def test_concurrent_processes_lose_no_update(tmp_path: Path) -> None:
    store = recall_path(tmp_path)
    context = multiprocessing.get_context("fork")
    workers = [
        context.Process(target=_record_in_process, args=(str(store), n, 20)) for n in range(3)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=30)
        assert worker.exitcode == 0
    entries = HitLog(store, SteppingClock()).entries()
    assert entries["memory/2026-11-30.md:1:5"]["recall_count"] == 60
    assert all(entries[f"memory/p{n}.md:1:2"]["recall_count"] == 20 for n in range(3))
    assert not list(store.parent.glob("*.tmp"))  # every temp file was renamed


def test_corrupt_file_is_moved_aside_and_started_fresh(tmp_path: Path) -> None:
    store = recall_path(tmp_path)
    store.parent.mkdir(parents=True)
    store.write_text('{"version": 1, "entries": {"x": ', encoding="utf-8")
    tracker = HitLog(store, SteppingClock())

    tracker.record("deploy", [hit()])

    (aside,) = store.parent.glob("recall.json.corrupt-*")
    assert aside.read_text(encoding="utf-8") == '{"version": 1, "entries": {"x": '
    assert list(tracker.entries()) == ["memory/2026-11-30.md:1:5"]


def test_wrong_layout_counts_as_corrupt(tmp_path: Path) -> None:
    store = recall_path(tmp_path)
    store.parent.mkdir(parents=True)
    store.write_text(json.dumps({"version": 1, "entries": {"k": {"path": 3}}}), encoding="utf-8")
    tracker = HitLog(store, SteppingClock())
    assert tracker.entries() == {}
    assert len(list(store.parent.glob("recall.json.corrupt-*"))) == 1
    store.write_text("[1, 2]", encoding="utf-8")
    assert tracker.entries() == {}
    assert len(list(store.parent.glob("recall.json.corrupt-*"))) == 2

"""shell.memory.hit_log on real files: one appended line per search, folded into a bounded store
without losing or double-counting a search, across threads, processes and kills."""

from __future__ import annotations

import json
import multiprocessing
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

from shell.memory.hit_log import (
    MAX_RECALLS_PER_UNIT,
    MAX_UNITS,
    HitLog,
    dreams_dir,
    query_hash,
)
from shell.memory.search.pipeline import SearchHit

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


def hit(
    path: str = "memory/2026-11-30.md",
    start: int = 1,
    end: int = 5,
    score: float = 0.5,
    unit_hash: str = "aaaaaaaaaaaa",
) -> SearchHit:
    return SearchHit(
        path=path,
        start_line=start,
        end_line=end,
        score=score,
        vector_score=score,
        text_score=0.0,
        snippet=f"text of {path}",
        citation=f"{path}#L{start}-L{end}",
        unit=f"{path}:{start}:{start}:{unit_hash}",
    )


def by_key(log: HitLog) -> dict[str, tuple[int, int, list[tuple[str, str, float]]]]:
    return {
        unit.key: (
            unit.start_line,
            unit.end_line,
            [(r.day, r.query, r.score) for r in unit.recalls],
        )
        for unit in log.recalled()
    }


def test_records_each_recall_with_its_day_query_and_score(tmp_path: Path) -> None:
    log = HitLog(dreams_dir(tmp_path), SteppingClock(timedelta(hours=20)))
    log.record("Deploy procedure", [hit(score=0.4), hit("MEMORY.md", 3, 9, 0.9, "bbbbbbbbbbbb")])
    log.record("  deploy   PROCEDURE ", [hit(score=0.6)])
    log.record("who owns billing", [hit(score=0.5)])

    units = by_key(log)
    assert units["memory/2026-11-30.md#aaaaaaaaaaaa"] == (
        1,
        1,
        [
            ("2026-11-30", query_hash("deploy procedure"), 0.4),
            ("2026-12-01", query_hash("deploy procedure"), 0.6),
            ("2026-12-02", query_hash("who owns billing"), 0.5),
        ],
    )
    assert units["MEMORY.md#bbbbbbbbbbbb"][2] == [
        ("2026-11-30", query_hash("Deploy procedure"), 0.9)
    ]
    assert (tmp_path / ".cairn" / "dreams" / "recall.log").is_file()


def test_a_unit_keeps_its_recalls_when_its_lines_move(tmp_path: Path) -> None:
    log = HitLog(dreams_dir(tmp_path), SteppingClock())
    log.record("tom coffee", [hit(start=3)])
    log.record("how does tom take coffee", [hit(start=7)])  # two lines were added above it
    (unit,) = log.fold()
    assert (unit.start_line, len(unit.recalls)) == (7, 2)


def test_an_empty_hit_list_writes_nothing(tmp_path: Path) -> None:
    log = HitLog(dreams_dir(tmp_path), SteppingClock())
    log.record("anything", [])
    assert not dreams_dir(tmp_path).exists()
    assert log.recalled() == []
    assert log.fold() == []


def test_fold_moves_the_log_into_the_store_once(tmp_path: Path) -> None:
    folder = dreams_dir(tmp_path)
    log = HitLog(folder, SteppingClock())
    log.record("q1", [hit()])
    first = log.fold()
    log.record("q2", [hit()])
    assert len(log.recalled()[0].recalls) == 2  # the store plus the new line, read only
    assert not list(folder.glob("*.pending"))
    second = log.fold()
    third = log.fold()
    assert [len(u.recalls) for u in (*first, *second, *third)] == [1, 2, 2]
    assert not (folder / "recall.log").exists()


def test_a_fold_killed_after_writing_the_store_counts_nothing_twice(tmp_path: Path) -> None:
    folder = dreams_dir(tmp_path)
    log = HitLog(folder, SteppingClock())
    log.record("q1", [hit()])
    log.record("q2", [hit()])
    log.fold()
    store = json.loads((folder / "recall.json").read_text(encoding="utf-8"))
    # the kill: the pending file the store already holds was never deleted
    (folder / f"recall.{store['folded'][-1]}.pending").write_text(
        json.dumps({"at": START.isoformat(), "q": "x", "hits": [["memory/a.md", 1, 1, "h", 1]]})
    )
    assert [len(u.recalls) for u in log.fold()] == [2]


def test_a_fold_killed_before_writing_the_store_loses_nothing(tmp_path: Path) -> None:
    folder = dreams_dir(tmp_path)
    log = HitLog(folder, SteppingClock())
    log.record("q1", [hit()])
    (folder / "recall.log").rename(folder / "recall.0123456789ab.pending")  # renamed, then killed
    log.record("q2", [hit()])
    assert [len(u.recalls) for u in log.fold()] == [2]
    assert not list(folder.glob("*.pending"))


def test_a_torn_line_is_skipped(tmp_path: Path) -> None:
    folder = dreams_dir(tmp_path)
    log = HitLog(folder, SteppingClock())
    log.record("q1", [hit()])
    with (folder / "recall.log").open("a", encoding="utf-8") as file:
        file.write(
            '{"at": "2026-11-30T09:00:00", "q": "ab", "hits": [["memory/'
        )  # killed mid-write
    log.record("q2", [hit()])
    assert [len(u.recalls) for u in log.fold()] == [2]


def test_the_store_is_bounded(tmp_path: Path) -> None:
    log = HitLog(dreams_dir(tmp_path), SteppingClock())
    log.record("first", [hit("memory/keep.md", unit_hash="k")])
    log.record("batch", [hit(f"memory/n{i}.md", unit_hash="n") for i in range(MAX_UNITS)])
    log.record("again", [hit("memory/keep.md", unit_hash="k")])  # the most recent now
    for i in range(MAX_RECALLS_PER_UNIT + 5):
        log.record(f"query {i}", [hit("memory/late.md", unit_hash="l")])

    units = {unit.key: unit for unit in log.fold()}
    assert len(units) == MAX_UNITS
    assert "memory/keep.md#k" in units
    assert "memory/n1.md#n" not in units  # the two least recently recalled went
    assert "memory/n2.md#n" in units
    late = units["memory/late.md#l"].recalls
    assert len(late) == MAX_RECALLS_PER_UNIT
    assert late[-1].query == query_hash(f"query {MAX_RECALLS_PER_UNIT + 4}")


def test_concurrent_threads_lose_no_record(tmp_path: Path) -> None:
    logs = [HitLog(dreams_dir(tmp_path), SteppingClock()) for _ in range(4)]

    def work(log: HitLog, worker: int) -> None:
        for i in range(15):
            log.record(f"q{worker}-{i}", [hit(), hit(f"memory/w{worker}.md", 1, 2)])
            if i == 7:
                log.fold()

    threads = [threading.Thread(target=work, args=(log, n)) for n, log in enumerate(logs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    units = {unit.key: len(unit.recalls) for unit in logs[0].fold()}
    assert units["memory/2026-11-30.md#aaaaaaaaaaaa"] == MAX_RECALLS_PER_UNIT  # 60, bounded
    assert all(units[f"memory/w{n}.md#aaaaaaaaaaaa"] == 15 for n in range(4))


def _record_in_process(folder: str, worker: int, rounds: int) -> None:
    log = HitLog(Path(folder), SteppingClock())
    for i in range(rounds):
        log.record(f"p{worker}-{i}", [hit(f"memory/p{worker}.md", 1, 2)])
        if i % 5 == 4:
            log.fold()


def test_concurrent_processes_lose_no_record(tmp_path: Path) -> None:
    folder = dreams_dir(tmp_path)
    context = multiprocessing.get_context("fork")
    workers = [
        context.Process(target=_record_in_process, args=(str(folder), n, 20)) for n in range(3)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=30)
        assert worker.exitcode == 0
    units = {unit.key: len(unit.recalls) for unit in HitLog(folder, SteppingClock()).fold()}
    assert units == {f"memory/p{n}.md#aaaaaaaaaaaa": 20 for n in range(3)}
    assert not list(folder.glob("*.tmp")) and not list(folder.glob("*.pending"))


def test_a_corrupt_store_is_moved_aside_and_started_fresh(tmp_path: Path) -> None:
    folder = dreams_dir(tmp_path)
    folder.mkdir(parents=True)
    (folder / "recall.json").write_text('{"version": 2, "units": {"x": ', encoding="utf-8")
    log = HitLog(folder, SteppingClock())
    log.record("deploy", [hit()])

    assert [unit.key for unit in log.fold()] == ["memory/2026-11-30.md#aaaaaaaaaaaa"]
    (aside,) = folder.glob("recall.json.corrupt-*")
    assert aside.read_text(encoding="utf-8") == '{"version": 2, "units": {"x": '


def test_an_older_or_wrong_layout_counts_as_corrupt(tmp_path: Path) -> None:
    folder = dreams_dir(tmp_path)
    folder.mkdir(parents=True)
    store = folder / "recall.json"
    store.write_text(json.dumps({"version": 1, "entries": {}}), encoding="utf-8")
    log = HitLog(folder, SteppingClock())
    assert log.recalled() == []
    assert len(list(folder.glob("recall.json.corrupt-*"))) == 1
    (notice,) = log.take_notices()
    assert "Set aside the recall store" in notice.message


def test_a_unit_or_record_of_the_wrong_types_is_dropped_and_said_once(tmp_path: Path) -> None:
    folder = dreams_dir(tmp_path)
    folder.mkdir(parents=True)
    store = folder / "recall.json"
    store.write_text(json.dumps({"version": 2, "folded": [], "units": {"k": {"path": 3}}}))
    log = HitLog(folder, SteppingClock())
    log.record("deploy", [hit()])
    with (folder / "recall.log").open("a", encoding="utf-8") as file:
        file.write('{"at": 5, "q": "ab", "best": 0.5, "hits": []}\n')
        file.write('{"at": "2026-11-30T09:00:00", "q": "ab", "best": "high", "hits": []}\n')
    assert [unit.key for unit in log.fold()] == ["memory/2026-11-30.md#aaaaaaaaaaaa"]
    assert sorted(n.message.split(" (")[0] for n in log.take_notices()) == [
        "Dropped 1 unit(s) of the wrong shape from the store",
        "Dropped 2 record(s) of the wrong shape from the hit log",
    ]
    assert [len(u.recalls) for u in log.fold()] == [1] and log.take_notices() == []


def test_the_bound_keeps_the_most_recent_recalls_whatever_order_they_came_in(
    tmp_path: Path,
) -> None:
    clock = SteppingClock(timedelta(minutes=1))
    log = HitLog(dreams_dir(tmp_path), clock)
    log.record("batch", [hit(f"memory/n{i}.md", unit_hash="n") for i in range(MAX_UNITS)])
    clock.now = START - timedelta(days=30)  # a process whose records are a month old
    log.record("stale", [hit("memory/old.md", unit_hash="o")])
    keys = {unit.key for unit in log.fold()}
    assert "memory/old.md#o" not in keys and len(keys) == MAX_UNITS

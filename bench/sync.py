"""Benchmark the workspace sync: no line lost over many rounds, and its cost against raw git.

Run: `python -m bench.sync [--json] [--rounds 200] [--timed 20] [--seed 7]`.

Two workspaces share a bare repository served by `git daemon` (receive-pack on, loopback). Each
round both append to the same day's note, sometimes (1 in 10 per side) add a line at the end of
MEMORY.md, and sync in a seeded random order. After every sync no memory file may hold a
conflict marker; every SyncConflict is resolved with take="both", as a user reviewing it would.
At the end every line written on either side must be on both sides.

Then three workspaces, where a conflict is left open: each round every side appends to the day's
note and, 1 in 3, to MEMORY.md; each SyncConflict waits 1 to 5 rounds on its machine, then is
resolved with a take drawn from local, remote and both. After every sync the remote must hold
every line any side has pushed, but those a resolution removed (a person's choice on that
machine); at the end every line is on every side but those, and every other side that lacks a
removed line was told it by a notice. (A removed line can come back: a conflict met on another
machine holds both sides, so it keeps the line; it is counted.)

Baseline in the same run: a sync that moves one new commit each way (pull one, push one) against
a raw `git pull --no-rebase && git push` doing the same between two plain clones (with the same
committed `merge=union` rule, so the raw pull merges the note too). Target: at most 1.5×.
"""

from __future__ import annotations

import argparse
import json
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.sync_held import TAKES, run_held_rounds
from shell.events.sync import SyncConflict, SyncFailed, SyncFinished
from shell.git.store import GitStore
from shell.sync import SyncEngine, clone_workspace
from shell.workspace import ATTRIBUTES, ATTRIBUTES_FILE, seed_workspace

TARGET_RATIO = 1.5
MARKERS = ("<<<<<<<", ">>>>>>>")
IDENTITY = {"author_name": "Bench", "author_email": "bench@localhost"}


class BenchClock:
    """A clock the rounds move by a minute each."""

    def __init__(self) -> None:
        self.now = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@contextmanager
def git_daemon(base: Path) -> Iterator[int]:
    """`git daemon` serving `base` on a free loopback port, stopped afterwards."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    process = subprocess.Popen(
        ["git", "daemon", "--export-all", "--enable=receive-pack", "--reuseaddr",
         f"--base-path={base}", "--listen=127.0.0.1", f"--port={port}", str(base)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        while True:  # until it listens
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.02)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=10)


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=Bench", "-c", "user.email=bench@localhost", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


class Side:
    """One machine: its workspace, its writes (one commit each) and every line it wrote."""

    def __init__(self, name: str, root: Path, clock: BenchClock) -> None:
        self.name = name
        self.root = root
        self.store = GitStore(root, clock=clock, **IDENTITY)
        self.engine = SyncEngine(root, clock=clock, **IDENTITY)
        self.written: list[tuple[str, str]] = []

    def append(self, rel: str, line: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as file:
            file.write(line + "\n")
        outcome = self.store.commit([rel], f"memory: append {rel}")
        assert outcome.error is None, outcome.error
        self.written.append((rel, line))

    def markers(self) -> list[str]:
        files = [self.root / "MEMORY.md", *sorted((self.root / "memory").glob("*.md"))]
        return [
            path.name
            for path in files
            if path.is_file() and any(m in path.read_text(encoding="utf-8") for m in MARKERS)
        ]


def make_pair(work: Path, url: str, clock: BenchClock) -> tuple[Side, Side]:
    first = work / "a"
    created = seed_workspace(first)
    (first / ATTRIBUTES_FILE).write_text(ATTRIBUTES, encoding="utf-8")
    a = Side("a", first, clock)
    a.store.ensure_repo()
    a.store.commit([*created, ATTRIBUTES_FILE], "workspace: seed")
    added = a.engine.add_remote(url)
    assert isinstance(added[-1], SyncFinished), added
    cloned = clone_workspace(url, work / "b")
    assert not isinstance(cloned[-1], SyncFailed), cloned
    return a, Side("b", work / "b", clock)


def run_rounds(work: Path, url: str, rounds: int, seed: int) -> dict[str, Any]:
    clock = BenchClock()
    a, b = make_pair(work, url, clock)
    rng = random.Random(seed)
    conflicts = resolved = syncs = failures = marker_hits = 0
    times: list[float] = []
    for number in range(rounds):
        clock.now += timedelta(minutes=1)
        day = f"memory/{(clock.now + timedelta(days=number // 50)).date().isoformat()}.md"
        for side in (a, b):
            side.append(day, f"- {side.name} round {number}: note {rng.randrange(10**6)}")
            if rng.random() < 0.1:
                side.append("MEMORY.md", f"- {side.name} round {number}: a durable fact")
        for side in rng.sample([a, b], 2):
            started = time.perf_counter()
            events = side.engine.sync()
            times.append(time.perf_counter() - started)
            syncs += 1
            failures += isinstance(events[-1], SyncFailed)
            marker_hits += len(side.markers())
            for event in events:
                if isinstance(event, SyncConflict):
                    conflicts += 1
                    side.engine.resolve(event.file, "both")
                    resolved += 1
    for side in (a, b, a, b):  # settle: the last resolves travel both ways
        side.engine.sync()
    lost = 0
    for writer in (a, b):
        for rel, line in writer.written:
            for reader in (a, b):
                text = (reader.root / rel).read_text(encoding="utf-8")
                lost += text.count(line + "\n") != 1
    return {
        "rounds": rounds,
        "syncs": syncs,
        "failed_syncs": failures,
        "lines_written": len(a.written) + len(b.written),
        "lines_lost": lost,
        "marker_files_seen": marker_hits,
        "memory_conflicts_surfaced": conflicts,
        "conflicts_resolved": resolved,
        "open_conflicts_at_end": len(a.engine.status().conflicts + b.engine.status().conflicts),
        "sync_p50_ms": round(statistics.median(times) * 1000, 1),
        "sync_p95_ms": round(sorted(times)[int(len(times) * 0.95) - 1] * 1000, 1),
    }


def held_rounds(
    work: Path, url: str, bare: Path, rounds: int, seed: int, machines: int
) -> dict[str, Any]:
    clock = BenchClock()
    sides = list(make_pair(work, url, clock))
    for name in "cdefgh"[: machines - 2]:
        cloned = clone_workspace(url, work / name)
        assert not isinstance(cloned[-1], SyncFailed), cloned
        sides.append(Side(name, work / name, clock))
    return run_held_rounds(sides, clock, bare, rounds, seed)


def time_one_each_way(work: Path, url: str, raw_url: str, timed: int) -> dict[str, Any]:
    """Median time of a sync that pulls one commit and pushes one: Cairn vs raw git."""
    clock = BenchClock()
    x, y = make_pair(work / "cairn", url, clock)
    x.engine.sync()  # detect-secrets imported before the timing
    raw_x, raw_y = work / "raw-x", work / "raw-y"
    git(work, "clone", "-q", str(x.root), str(raw_x))
    git(raw_x, "push", "-q", raw_url, "HEAD:refs/heads/main")
    git(raw_x, "remote", "set-url", "origin", raw_url)
    git(raw_x, "fetch", "-q", "origin")
    git(raw_x, "branch", "-q", "--set-upstream-to=origin/main")
    git(work, "clone", "-q", raw_url, str(raw_y))
    cairn: list[float] = []
    raw: list[float] = []
    day = "memory/2026-11-30.md"
    for number in range(timed):
        clock.now += timedelta(minutes=1)
        y.append(day, f"- y {number}")
        y.engine.sync()
        x.append(day, f"- x {number}")
        started = time.perf_counter()
        events = x.engine.sync()
        cairn.append(time.perf_counter() - started)
        finished = events[-1]
        assert isinstance(finished, SyncFinished) and finished.pulled_commits >= 1, events
        for repo, line in ((raw_y, f"- y {number}"), (raw_x, f"- x {number}")):
            with (repo / day).open("a", encoding="utf-8") as file:
                file.write(line + "\n")
            git(repo, "add", day)
            git(repo, "commit", "-qm", "append")
            started = time.perf_counter()
            git(repo, "pull", "-q", "--no-rebase", "--no-edit")
            git(repo, "push", "-q")
            if repo == raw_x:
                raw.append(time.perf_counter() - started)
    cairn_ms = statistics.median(cairn) * 1000
    raw_ms = statistics.median(raw) * 1000
    return {
        "timed_syncs": timed,
        "cairn_one_each_way_ms": round(cairn_ms, 1),
        "raw_pull_push_ms": round(raw_ms, 1),
        "ratio": round(cairn_ms / raw_ms, 2),
        "target_ratio": TARGET_RATIO,
    }


def print_table(report: dict[str, Any]) -> None:
    rounds, timing, held = report["rounds"], report["timing"], report["held"]
    verdict = "ok" if timing["ratio"] <= TARGET_RATIO else "MISSED"
    rows = [
        ("rounds / syncs (failed)", f"{rounds['rounds']} / {rounds['syncs']}"
         f" ({rounds['failed_syncs']})"),
        ("lines written, both sides", str(rounds["lines_written"])),
        ("lines lost (target 0)", str(rounds["lines_lost"])),
        ("files with conflict markers seen (target 0)", str(rounds["marker_files_seen"])),
        ("MEMORY.md conflicts surfaced / resolved", f"{rounds['memory_conflicts_surfaced']}"
         f" / {rounds['conflicts_resolved']}"),
        ("open conflicts at the end", str(rounds["open_conflicts_at_end"])),
        ("sync in the rounds, p50 / p95", f"{rounds['sync_p50_ms']} / {rounds['sync_p95_ms']} ms"),
        (f"held conflicts, {held['machines']} machines: rounds / syncs (failed)",
         f"{held['rounds']} / {held['syncs']} ({held['failed_syncs']})"),
        ("  lines written / lost (target 0) / duplicated",
         f"{held['lines_written']} / {held['lines_lost']} / {held['lines_duplicated']}"),
        ("  remote missing a pushed line, per sync (target 0)", str(held["remote_drops"])),
        ("  files with conflict markers seen (target 0)", str(held["marker_files_seen"])),
        ("  conflicts surfaced; resolved local / remote / both",
         f"{held['memory_conflicts_surfaced']}; " + " / ".join(
             str(held["resolutions"][take]) for take in TAKES)),
        ("  lines a resolution removed / not told elsewhere (target 0)",
         f"{held['lines_removed_by_a_resolution']} / {held['removals_untold']}"),
        ("  of them back, kept by a merge that met a conflict", str(held["removed_lines_back"])),
        ("  open conflicts at the end", str(held["open_conflicts_at_end"])),
        ("sync, one commit each way (median)", f"{timing['cairn_one_each_way_ms']} ms"),
        ("raw git pull --no-rebase && git push", f"{timing['raw_pull_push_ms']} ms"),
        ("ratio (target ≤ 1.5×)", f"{timing['ratio']}× {verdict}"),
    ]  # fmt: skip
    width = max(len(name) for name, _ in rows)
    print(f"{'measure'.ljust(width)}  value", file=sys.stdout)
    print(f"{'-' * width}  {'-' * 24}")
    for name, value in rows:
        print(f"{name.ljust(width)}  {value}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sync", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--rounds", type=int, default=200, help="rounds of writes and syncs")
    parser.add_argument("--timed", type=int, default=20, help="timed syncs, each way")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--machines", type=int, default=3, help="in the held-conflict rounds")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cairn-bench-sync-") as scratch:
        work = Path(scratch)
        served = work / "served"
        served.mkdir()
        for name in ("rounds.git", "held.git", "timed.git", "raw.git"):
            subprocess.run(
                ["git", "init", "-q", "--bare", "-b", "main", str(served / name)], check=True
            )
        with git_daemon(served) as port:
            base = f"git://127.0.0.1:{port}"
            (work / "rounds").mkdir()
            (work / "held").mkdir()
            report = {
                "rounds": run_rounds(work / "rounds", f"{base}/rounds.git", args.rounds, args.seed),
                "held": held_rounds(
                    work / "held",
                    f"{base}/held.git",
                    served / "held.git",
                    args.rounds,
                    args.seed,
                    args.machines,
                ),
                "timing": time_one_each_way(
                    work, f"{base}/timed.git", f"{base}/raw.git", args.timed
                ),
            }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_table(report)
    held = report["held"]
    kept = report["rounds"]["lines_lost"] == held["lines_lost"] == held["remote_drops"] == 0
    return 0 if kept and held["removals_untold"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())

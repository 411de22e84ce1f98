"""How long `cairn why` takes on a year of memory: a line traced through its blame to its turn.

Run: `python -m bench.why [--json] [--days 365] [--writes 20] [--seed 7]`. See bench/README.md.

The bench builds a workspace whose history is a year of writes, one commit each as Cairn makes
them (`memory(tool): append 1 line …` with `session <id> turn <n>`): `--writes` a day appended to
that day's note, and one in ten an insertion into MEMORY.md at a random place (so its lines
move); 7,300 commits and a MEMORY.md of ~730 lines at the defaults. The history is written with
`git fast-import` (a commit per write, as the memory door would leave it, in a second rather than
minutes). Then it times, for random lines: `Why.line` (blame, the commit, its turn, the turn's
writes) on MEMORY.md and on a note, in process; and `cairn why` as its own process. Baselines in
the same run: `git log -1` (what one git call costs here), `git blame -L` of a note line before
and after Cairn wrote the commit-graph with its changed-path filters, and `git blame` of the
whole MEMORY.md (what a line-by-line view would pay up front).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from shell.git.store import GitStore
from shell.why import Why

START = datetime(2025, 12, 1, 9, 0, tzinfo=UTC)
CAIRN = str(Path(sys.executable).with_name("cairn"))


def build(root: Path, days: int, writes: int, rng: random.Random) -> int:
    """A year of writes as commits, by `git fast-import`; how many commits."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    memory: list[str] = ["# MEMORY.md", ""]
    stream: list[bytes] = []
    mark = 0

    def commit(when: datetime, message: str, path: str, text: str) -> None:
        nonlocal mark
        mark += 1
        data = text.encode()
        stamp = f"{int(when.timestamp())} +0000"
        stream.append(
            f"commit refs/heads/main\nmark :{mark}\n"
            f"author Cairn <cairn@bench> {stamp}\ncommitter Cairn <cairn@bench> {stamp}\n"
            f"data {len(message.encode())}\n{message}\n".encode()
        )
        if mark > 1:
            stream.append(f"from :{mark - 1}\n".encode())
        stream.append(f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n")

    commit(START, "workspace: seed MEMORY.md", "MEMORY.md", "\n".join(memory) + "\n")
    for day in range(days):
        date = (START + timedelta(days=day)).date().isoformat()
        session = f"{date.replace('-', '')}-090000-{day:06x}"
        note: list[str] = []
        for turn in range(1, writes + 1):
            when = START + timedelta(days=day, minutes=turn)
            origin = f"session {session} turn {turn}"
            if turn % 10 == 0:
                memory.insert(rng.randint(2, len(memory)), f"- fact {day}.{turn}: kept for long")
                message = f"memory(tool): edit MEMORY.md\n\n{origin}\n"
                commit(when, message, "MEMORY.md", "\n".join(memory) + "\n")
            else:
                note.append(f"- {date} note {turn}: something said in turn {turn}")
                message = f"memory(tool): append 1 line to memory/{date}.md\n\n{origin}\n"
                commit(when, message, f"memory/{date}.md", "\n".join(note) + "\n")
    subprocess.run(["git", "fast-import", "--quiet"], cwd=root, input=b"".join(stream), check=True)
    subprocess.run(["git", "checkout", "-q", "-f", "main"], cwd=root, check=True)
    return mark


def timed(run: Callable[[], object], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append((time.perf_counter() - started) * 1000)
    return times


def row(name: str, times: list[float]) -> dict[str, float | str]:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return {"what": name, "median_ms": statistics.median(times), "p95_ms": p95, "n": len(times)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--writes", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="cairn-bench-why-") as folder:
        root = Path(folder) / "ws"
        started = time.perf_counter()
        commits = build(root, args.days, args.writes, rng)
        built_s = time.perf_counter() - started
        why = Why(GitStore(root), root / ".cairn")
        memory_lines = len((root / "MEMORY.md").read_text().splitlines())
        notes = sorted((root / "memory").glob("*.md"))

        def memory_line() -> object:
            return why.line("MEMORY.md", rng.randint(3, memory_lines))

        def note_line() -> object:
            note = rng.choice(notes)
            count = len(note.read_text().splitlines())
            return why.line(f"memory/{note.name}", rng.randint(1, count))

        def process() -> object:
            place = f"MEMORY.md:{rng.randint(3, memory_lines)}"
            command = [CAIRN, "why", place, "--workspace", str(root)]
            return subprocess.run(command, capture_output=True, check=True)

        def log_one() -> object:
            return subprocess.run(["git", "log", "-1"], cwd=root, capture_output=True, check=True)

        def blame_all() -> object:
            command = ["git", "blame", "--porcelain", "MEMORY.md"]
            return subprocess.run(command, cwd=root, capture_output=True, check=True)

        def blame_note_line() -> object:
            note = rng.choice(notes)
            command = ["git", "blame", "--porcelain", "-L", "5,5", f"memory/{note.name}"]
            return subprocess.run(command, cwd=root, capture_output=True, check=True)

        bare_blame = timed(blame_note_line, args.repeat)  # before Why writes the commit-graph
        traced = why.line("MEMORY.md", memory_lines)  # the first call writes the commit-graph
        assert traced.provenance.steps and traced.provenance.steps[0].commit.turn is not None
        rows = [
            row("Why.line, a MEMORY.md line", timed(memory_line, args.repeat)),
            row("Why.line, a note line", timed(note_line, args.repeat)),
            row("cairn why, its own process", timed(process, max(5, args.repeat // 3))),
            row("baseline: git log -1", timed(log_one, args.repeat)),
            row("baseline: git blame -L, a note line, no graph", bare_blame),
            row("git blame -L, a note line, commit-graph", timed(blame_note_line, args.repeat)),
            row("baseline: git blame MEMORY.md whole", timed(blame_all, max(5, args.repeat // 3))),
        ]
    result = {
        "commits": commits,
        "memory_lines": memory_lines,
        "notes": len(notes),
        "built_s": round(built_s, 2),
        "rows": rows,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(
        f"a year of memory: {commits:,} commits, MEMORY.md {memory_lines} lines, "
        f"{len(notes)} notes (built in {built_s:.1f} s)\n"
    )
    print(f"{'what':46} {'median ms':>10} {'p95 ms':>10} {'n':>4}")
    for entry in rows:
        print(
            f"{entry['what']:46} {entry['median_ms']:>10.1f} {entry['p95_ms']:>10.1f} "
            f"{entry['n']:>4}"
        )


if __name__ == "__main__":
    main()

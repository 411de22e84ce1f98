"""Benchmark `cairn forget`: what a forget costs on the machine that forgets, and on another
machine at its next sync, against the size of the history.

Run: `python -m bench.forget [--commits 100 500] [--json]`.

For each size: a workspace with that many commits (one daily-note line each, the line to forget
in one of the first), a bare remote on disk, a second machine cloned from it with one commit
not pushed yet. Timed: the forget on the first machine (tombstone commit, purge of the whole
history, index scrub, the sync that forces it onto the remote with a lease, reflog expiry and
`gc --prune=now`, the final read of every object), then the second machine's sync (the check
that the remote's rewrite only took out forgotten lines, its own purge, the merge, the push,
its gc). Checked after: no object of either repository holds the line, and the second
machine's unpushed line reached the first. Nothing here is asserted by the test suite.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path

from shell.events.sync import SyncFinished
from shell.forget import Identity, forget, objects_holding
from shell.git.runner import Git
from shell.git.store import GitStore
from shell.memory.forget.tombstones import normal_form
from shell.sync import SyncEngine, clone_workspace
from shell.workspace import ATTRIBUTES, ATTRIBUTES_FILE, seed_workspace

LINE = "Kari moved to Bergen in March with her two cats"
WHO = {"author_name": "Bench", "author_email": "bench@localhost"}


def run(commits: int) -> dict[str, float | int | bool]:
    with tempfile.TemporaryDirectory(prefix="cairn-bench-forget-") as folder:
        base = Path(folder)
        bare = base / "remote.git"
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], check=True)
        a = base / "a"
        created = seed_workspace(a)
        (a / ATTRIBUTES_FILE).write_text(ATTRIBUTES, encoding="utf-8")
        store = GitStore(a, **WHO)
        store.ensure_repo()
        store.commit([*created, ATTRIBUTES_FILE], "workspace: seed")
        for i in range(commits):
            day = f"memory/2026-{1 + i // 28 % 12:02d}-{1 + i % 28:02d}.md"
            with (a / day).open("a", encoding="utf-8") as file:
                file.write(f"- fact {i} about project {i % 7}\n")
                if i == 3:
                    file.write(f"- {LINE}\n")
            store.commit([day], f"memory(tool): fact {i}")
        engine_a = SyncEngine(a, **WHO)
        engine_a.add_remote(str(bare))
        b = base / "b"
        clone_workspace(str(bare), b)
        with (b / "memory" / "2026-12-31.md").open("a", encoding="utf-8") as file:
            file.write("- b's line not pushed yet\n")
        GitStore(b, **WHO).commit(["memory/2026-12-31.md"], "memory(tool): b")
        engine_b = SyncEngine(b, **WHO)

        started = time.perf_counter()
        done = forget(
            a, text=LINE, apply=True, identity=Identity("Bench", "bench@localhost"), engine=engine_a
        )
        forget_s = time.perf_counter() - started
        started = time.perf_counter()
        synced = engine_b.sync()
        adopt_s = time.perf_counter() - started
        engine_a.sync()
        spans = {normal_form(LINE)}
        return {
            "commits": commits,
            "forget_s": round(forget_s, 2),
            "other_machine_sync_s": round(adopt_s, 2),
            "rewritten": getattr(done[-1], "commits", -1),
            "synced": isinstance(synced[-1], SyncFinished),
            "objects_left": objects_holding(Git(a), spans) + objects_holding(Git(b), spans),
            "unpushed_line_kept": "b's line" in (a / "memory" / "2026-12-31.md").read_text(),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, nargs="+", default=[100, 500])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [run(n) for n in args.commits]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print("| commits | forget (s) | other machine's sync (s) | rewritten | objects left | b kept |")
    print("| ---: | ---: | ---: | ---: | ---: | :---: |")
    for row in rows:
        print(
            f"| {row['commits']} | {row['forget_s']} | {row['other_machine_sync_s']} | "
            f"{row['rewritten']} | {row['objects_left']} | "
            f"{'yes' if row['unpushed_line_kept'] and row['synced'] else 'NO'} |"
        )


if __name__ == "__main__":
    main()

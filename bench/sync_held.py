"""bench.sync's held-conflict rounds: conflicts left open, resolved each way, several machines.

See bench/sync.py's docstring; `python -m bench.sync` runs them.
"""

from __future__ import annotations

import random
import subprocess
from datetime import timedelta
from pathlib import Path
from typing import Any

from shell.events.sync import SyncConflict, SyncFailed, SyncFinished, Take
from shell.events.turns import Notice

TAKES: tuple[Take, ...] = ("local", "remote", "both")


def remote_lines(bare: Path, rel: str) -> set[str]:
    done = subprocess.run(
        ["git", "--git-dir", str(bare), "show", f"main:{rel}"], capture_output=True, check=False
    )
    return set(done.stdout.decode("utf-8", "replace").splitlines())


def resolution_removed(side: Any) -> set[str]:
    """The lines the resolution just committed on `side` took out of MEMORY.md."""

    def lines(rev: str) -> set[str]:
        done = subprocess.run(
            ["git", "show", f"{rev}:MEMORY.md"], cwd=side.root, capture_output=True, check=False
        )
        return set(done.stdout.decode("utf-8", "replace").splitlines())

    return {line for line in lines("HEAD^") - lines("HEAD") if line.strip()}


def run_held_rounds(
    sides: list[Any], clock: Any, bare: Path, rounds: int, seed: int
) -> dict[str, Any]:
    """The rounds over `sides` (bench.sync's `Side`s, one remote, `bare` behind it)."""
    rng = random.Random(seed)
    pending: dict[tuple[str, str], tuple[int, Take]] = {}
    pushed: set[tuple[str, str]] = set()
    removed: dict[str, str] = {}  # line → the side whose resolution removed it
    told: dict[str, list[str]] = {side.name: [] for side in sides}
    takes = dict.fromkeys(TAKES, 0)
    conflicts = syncs = failures = marker_hits = remote_drops = 0

    def resolve(side: Any, file: str, take: Take) -> None:
        events = side.engine.resolve(file, take)
        takes[take] += 1
        if events and getattr(events[-1], "commit", None):
            removed.update(dict.fromkeys(resolution_removed(side), side.name))

    def sync(side: Any, number: int) -> None:
        nonlocal conflicts, syncs, failures, marker_hits, remote_drops
        mine = {(rel, line) for rel, line in side.written}
        events = side.engine.sync()
        syncs += 1
        failures += isinstance(events[-1], SyncFailed)
        marker_hits += len(side.markers())
        told[side.name] += [event.message for event in events if isinstance(event, Notice)]
        for event in events:
            if isinstance(event, SyncConflict):
                conflicts += 1
                pending.setdefault(
                    (side.name, event.file), (number + rng.randint(1, 5), rng.choice(TAKES))
                )
        if isinstance(events[-1], SyncFinished):
            pushed.update(mine)
        for rel in {rel for rel, _ in pushed}:
            held = remote_lines(bare, rel)
            remote_drops += sum(
                1 for at, line in pushed if at == rel and line not in held and line not in removed
            )

    by_name = {side.name: side for side in sides}
    for number in range(rounds):
        clock.now += timedelta(minutes=1)
        for (name, file), (due, take) in sorted(pending.items()):
            if due <= number:
                del pending[(name, file)]
                resolve(by_name[name], file, take)
        day = f"memory/{(clock.now + timedelta(days=number // 50)).date().isoformat()}.md"
        for side in sides:
            side.append(day, f"- {side.name} round {number}: note {rng.randrange(10**6)}")
            if rng.random() < 1 / 3:
                side.append("MEMORY.md", f"- {side.name} round {number}: a durable fact")
        for side in rng.sample(sides, len(sides)):
            sync(side, number)
    for (name, file), (_, take) in sorted(pending.items()):
        resolve(by_name[name], file, take)
    pending.clear()
    for _ in range(4):  # settle: the last resolutions travel everywhere
        for side in sides:
            sync(side, rounds)
        for (name, file), _ in sorted(pending.items()):
            resolve(by_name[name], file, "both")
        pending.clear()
    lost = duplicated = 0
    for writer in sides:
        for rel, line in writer.written:
            for reader in sides:
                count = (reader.root / rel).read_text(encoding="utf-8").count(line + "\n")
                lost += count == 0 and line not in removed
                duplicated += count > 1
    untold = [
        (line, side.name)
        for line, chooser in removed.items()
        for side in sides
        if side.name != chooser
        and line not in (side.root / "MEMORY.md").read_text(encoding="utf-8").splitlines()
        and not any(line in message for message in told[side.name])
    ]
    back = [
        line
        for line in removed
        if all(line in (side.root / "MEMORY.md").read_text(encoding="utf-8") for side in sides)
    ]
    return {
        "machines": len(sides),
        "rounds": rounds,
        "syncs": syncs,
        "failed_syncs": failures,
        "lines_written": sum(len(side.written) for side in sides),
        "lines_lost": lost,
        "lines_duplicated": duplicated,
        "remote_drops": remote_drops,
        "marker_files_seen": marker_hits,
        "memory_conflicts_surfaced": conflicts,
        "resolutions": takes,
        "lines_removed_by_a_resolution": len(removed),
        "removals_untold": len(untold),
        "removed_lines_back": len(back),
        "open_conflicts_at_end": sum(len(side.engine.status().conflicts) for side in sides),
    }

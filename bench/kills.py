"""Kill `cairn run` at random moments and check that nothing was lost or corrupted.

    python -m bench.kills [--kills 50] [--seed 7] [--json]

Each round starts `cairn run` (the demo brain, a real workspace, git and the index) on a script
that appends facts, searches, flushes and compacts, and SIGKILLs it a random few milliseconds
after one of the moments that start such work (`MOMENTS`), so kills land inside appends,
commits, flushes, compactions and index syncs. After each kill:

1. every memory file is whole: it holds what git's HEAD holds, or that plus whole appended
   lines (an append whose commit the kill prevented); never a torn line;
2. every write the run reported as committed is in git, and `git fsck` is clean;
3. the session resumes: `cairn run --resume` answers and its own write is committed (a stale
   `index.lock` is cleared with an event);
4. the index syncs or rebuilds by itself: `cairn search` finds that write.

The test suite runs three rounds (`tests/e2e/test_kills.py`); this bench runs `--kills`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shell.config import KEY_ENV_VARS

CAIRN = str(Path(sys.executable).with_name("cairn"))
SCRIPT = [
    "remember that the Heron design review is on 9 December",
    "remember that our release train leaves every second Tuesday",
    "what do you know about the Heron review?",
    "/flush",
    "remember that the backup bucket is cairn-backups-eu",
    "/compact",
    "remember that the API gateway runs on Envoy",
    "what runs our API gateway?",
]


MOMENTS = frozenset(
    {"turn_started", "tool_call_started", "flush_started", "compaction_started", "index_synced"}
)
"""A kill comes 0-80 ms after the n-th of these (n random): inside an append and its commit, a
flush, a compaction, an index sync or a model call. The script has about 18 of them."""


@dataclass
class Round:
    number: int
    events_seen: int = 0
    last_event: str = ""
    killed: bool = False
    committed: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    lock_cleared: bool = False
    seconds: float = 0.0


def environment(home: Path) -> dict[str, str]:
    keep = {  # no provider key: the demo brain, always
        k: v for k, v in os.environ.items() if not k.startswith("CAIRN_") and k not in KEY_ENV_VARS
    }
    return {
        **keep,
        "HOME": str(home),
        "CAIRN_CONFIG": str(home / "none.toml"),
        "CAIRN_WATCH": "false",
        "CAIRN_SCOPES_ENABLED": "off",  # one memory: the one whose every write is checked
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }


def run_and_kill(workspace: Path, env: dict[str, str], rng: random.Random, number: int) -> Round:
    """One `cairn run` of the script, killed after a random number of events."""
    result = Round(number)
    target, moments = rng.randint(1, 16), 0
    script = [
        f"{line} (round {number})" if line.startswith("remember") else line for line in SCRIPT
    ]
    process = subprocess.Popen(
        [CAIRN, "run", "--workspace", str(workspace), *script],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        text=True,
    )
    assert process.stdout is not None
    for line in process.stdout:
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        result.events_seen += 1
        result.last_event = event.get("type", "")
        if event.get("type") == "memory_written" and event.get("commit"):
            result.committed.append(event["commit"])
        moments += event.get("type") in MOMENTS
        if moments >= target:
            time.sleep(rng.uniform(0, 0.08))
            process.send_signal(signal.SIGKILL)
            result.killed = True
            break
    process.wait()
    return result


def check(workspace: Path, env: dict[str, str], result: Round) -> None:
    """The four checks of the module docstring; what fails is added to `result.problems`."""
    result.problems += whole_files(workspace)
    for sha in result.committed:
        if _git(workspace, "cat-file", "-e", f"{sha}^{{commit}}").returncode:
            result.problems.append(f"reported commit {sha[:7]} is not in git")
    fsck = _git(workspace, "fsck", "--no-progress", "--no-dangling")
    if fsck.returncode:
        result.problems.append(f"git fsck: {fsck.stderr.strip()[:200]}")
    fact = f"recovery round {result.number} used the blue door"
    resumed = subprocess.run(
        [CAIRN, "run", "--workspace", str(workspace), "--resume", f"remember that {fact}"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    events = [json.loads(line) for line in resumed.stdout.splitlines() if line.startswith("{")]
    kinds = [event["type"] for event in events]
    result.lock_cleared = "git_lock_cleared" in kinds
    finished = [e for e in events if e["type"] == "turn_finished"]
    if resumed.returncode or not finished or finished[-1]["reason"] != "completed":
        result.problems.append(f"resume failed: {resumed.stderr.strip()[-200:]}")
    if not any(e["type"] == "memory_written" and e.get("commit") for e in events):
        result.problems.append("the resumed session's write was not committed")
    search = subprocess.run(
        [CAIRN, "search", "--workspace", str(workspace), "--json", fact],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    if search.returncode or "blue door" not in search.stdout:
        result.problems.append(f"search after the kill missed the new fact: {search.stderr[-200:]}")


def whole_files(workspace: Path) -> list[str]:
    """Each memory file holds HEAD's content, or that plus whole lines; never a torn one."""
    problems = []
    files = [workspace / "MEMORY.md", *sorted((workspace / "memory").rglob("*.md"))]
    for path in files:
        if not path.is_file():
            continue
        name = path.relative_to(workspace).as_posix()
        data = path.read_bytes()
        head = _git(workspace, "show", f"HEAD:{name}")
        committed = head.stdout.encode() if head.returncode == 0 else b""
        if data and not data.endswith(b"\n"):
            problems.append(f"{name} ends in a torn line")
        elif not data.startswith(committed):
            problems.append(f"{name} lost content that HEAD holds")
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            problems.append(f"{name} is not valid UTF-8")
    return problems


def _git(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(workspace), *args], capture_output=True, text=True)


def run_rounds(rounds: int, seed: int, folder: Path) -> list[Round]:
    home = folder / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = environment(home)
    workspace = folder / "workspace"
    subprocess.run(
        [CAIRN, "init", str(workspace)], env=env, check=True, capture_output=True, timeout=120
    )
    rng = random.Random(seed)
    results = []
    for number in range(1, rounds + 1):
        started = time.perf_counter()
        result = run_and_kill(workspace, env, rng, number)
        check(workspace, env, result)
        result.seconds = time.perf_counter() - started
        results.append(result)
        status = "ok" if not result.problems else "; ".join(result.problems)
        print(
            f"{number:>3} {'killed' if result.killed else 'ended '} after "
            f"{result.events_seen:>3} events ({result.last_event:<22}) "
            f"{len(result.committed)} commits reported  {status}",
            file=sys.stderr,
            flush=True,
        )
    return results


def summary(results: list[Round]) -> dict[str, Any]:
    after: dict[str, int] = {}
    for result in results:
        if result.killed:
            after[result.last_event] = after.get(result.last_event, 0) + 1
    return {
        "rounds": len(results),
        "kills": sum(r.killed for r in results),
        "rounds_with_problems": sum(bool(r.problems) for r in results),
        "problems": [p for r in results for p in r.problems],
        "stale_locks_cleared": sum(r.lock_cleared for r in results),
        "killed_after_event": dict(sorted(after.items(), key=lambda item: -item[1])),
        "seconds_per_round": round(sum(r.seconds for r in results) / max(1, len(results)), 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=50)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="JSON on stdout, progress on stderr")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cairn-kills-") as folder:
        report = summary(run_rounds(args.kills, args.seed, Path(folder)))
    print(json.dumps(report, indent=2), file=sys.stdout if args.json else sys.stderr)
    return 1 if report["rounds_with_problems"] else 0


if __name__ == "__main__":
    raise SystemExit(main())

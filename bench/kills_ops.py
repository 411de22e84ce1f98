"""Kill `cairn sync`, `cairn revert` and `cairn dream --apply` mid-work and count half states.

    python -m bench.kills_ops [--rounds 18] [--seed 5] [--json]

Two workspaces, A and B, share a bare remote. The rounds take the three operations in turn:

- **sync**: B remembers a line and syncs (not killed); A remembers a line; A's `cairn sync` is
  killed;
- **revert**: A remembers a line; `cairn revert SHA --yes` of that commit is killed;
- **dream**: A is told a fact and asked about it four ways, `cairn dream` proposes it, and
  `cairn dream --apply ID` is killed.

Each kill comes 0-60 ms after the first sign that the operation is changing something (a file
it writes first: the write journal, the revert journal, the sync's merge journal or incoming
ref, git's index lock), so kills land inside swaps, commits, merges and pushes; an operation
that finishes first counts as "ended". Then the next start (`cairn sync` on A, which recovers
first, as every command that changes memory does) and the checks. A **half state** is any of:

1. a memory file of A that differs from HEAD (a change neither committed nor undone), or a
   journal, lock, merge or revert left behind; `git fsck` not clean;
2. a line A had committed before the operation missing from A's HEAD, unless a revert
   commit removed it;
3. dream: DREAMS.md says the proposal is accepted and MEMORY.md lacks its text, or MEMORY.md
   holds it while DREAMS.md still says open;
4. sync: after A's next sync, the remote lacks a line that A or B committed.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.kills import CAIRN, environment

OPERATIONS = ("sync", "revert", "dream")
SIGNS = {
    "sync": (".git/index.lock", ".git/refs/cairn/sync/incoming", ".cairn/sync/merge.json"),
    "revert": (".cairn/revert.json", ".git/index.lock"),
    "dream": (".cairn/journal.json", ".git/index.lock"),
}
"""Files whose appearance (or change) means the operation has started to change something."""
LEFT_BEHIND = (
    ".cairn/journal.json",
    ".cairn/revert.json",
    ".cairn/sync/merge.json",
    ".git/index.lock",
    ".git/MERGE_HEAD",
    ".git/REVERT_HEAD",
)
PEOPLE = ("Tom", "Ana", "Ravi", "Mei", "Olu", "Sven", "Lena", "Kofi", "Ines", "Yuki")
DRINKS = ("black coffee", "green tea", "oat latte", "espresso", "chai", "cocoa")


@dataclass
class Round:
    number: int
    operation: str
    outcome: str = "ended"
    sign: str = ""
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0


class Machines:
    """A and B behind one bare remote, and the `cairn` commands the bench runs on them."""

    def __init__(self, folder: Path) -> None:
        home = folder / "home"
        home.mkdir(parents=True)
        self.env = environment(home)
        self.remote = folder / "remote.git"
        self.a, self.b = folder / "a", folder / "b"
        subprocess.run(["git", "init", "-q", "--bare", str(self.remote)], check=True)
        self.cairn("init", str(self.a))
        self.cairn("remote", "add", str(self.remote), workspace=self.a)
        self.cairn("sync", workspace=self.a)
        self.cairn("init", "--remote", str(self.remote), str(self.b))

    def cairn(self, *args: str, workspace: Path | None = None) -> list[dict[str, Any]]:
        where = ["--workspace", str(workspace)] if workspace else []
        command, *rest = args
        done = subprocess.run(
            [CAIRN, command, *where, *rest],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=600,
        )
        return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]

    def remember(self, workspace: Path, fact: str, *questions: str) -> str:
        """The commit of the line `cairn run` wrote for `remember that <fact>`."""
        events = self.cairn("run", f"remember that {fact}", *questions, workspace=workspace)
        commits = [e["commit"] for e in events if e["type"] == "memory_written" and e["commit"]]
        return commits[0] if commits else ""

    def killed(self, operation: str, args: list[str], rng: random.Random, result: Round) -> None:
        """Run `cairn <args>` on A and SIGKILL it soon after the first sign of its work."""
        process = subprocess.Popen(
            [CAIRN, *args, "--workspace", str(self.a)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=self.env,
        )
        signs = {sign: _stamp(self.a / sign) for sign in SIGNS[operation]}
        while process.poll() is None:
            if seen := next((s for s, was in signs.items() if _stamp(self.a / s) != was), None):
                time.sleep(rng.uniform(0, 0.06))
                process.send_signal(signal.SIGKILL)
                result.outcome, result.sign = "killed", Path(seen).name
                break
            time.sleep(0.0005)
        process.wait()


def run_rounds(rounds: int, seed: int, folder: Path) -> list[Round]:
    machines = Machines(folder)
    rng = random.Random(seed)
    results = []
    for number in range(1, rounds + 1):
        started = time.perf_counter()
        result = Round(number, OPERATIONS[(number - 1) % len(OPERATIONS)])
        one_round(machines, result, rng)
        result.seconds = time.perf_counter() - started
        results.append(result)
        status = "; ".join(result.problems) or "ok"
        print(
            f"{number:>3} {result.operation:<6} {result.outcome:<6} {result.sign:<14} {status}",
            file=sys.stderr,
            flush=True,
        )
    return results


def one_round(machines: Machines, result: Round, rng: random.Random) -> None:
    a, number = machines.a, result.number
    person, drink = PEOPLE[number % len(PEOPLE)], DRINKS[number % len(DRINKS)]
    proposal = ("", "")
    if result.operation == "sync":
        machines.remember(machines.b, f"machine B saw line {number} of the sync bench")
        machines.cairn("sync", workspace=machines.b)
        machines.remember(a, f"machine A wrote line {number} of the sync bench")
        before = committed_lines(a)
        machines.killed("sync", ["sync"], rng, result)
    elif result.operation == "revert":
        sha = machines.remember(a, f"the revert bench line {number} is a mistake")
        before = committed_lines(a)
        machines.killed("revert", ["revert", sha, "--yes"], rng, result)
    else:
        machines.remember(
            a,
            f"{person} {number} drinks {drink}",
            *(q.format(f"{person} {number}") for q in QUESTIONS),
        )
        proposed = machines.cairn("dream", "--json", workspace=a)
        found = [
            e["proposal"]
            for e in proposed
            if e["type"] == "dream_proposed" and f"{person} {number}" in e["proposal"]["text"]
        ]
        before = committed_lines(a)
        if not found:
            result.problems.append("setup: no proposal to accept")
            return
        proposal = (found[0]["id"], found[0]["text"])
        machines.killed("dream", ["dream", "--apply", proposal[0]], rng, result)
    machines.cairn("sync", workspace=a)  # the next start: recovers, then syncs
    result.problems += half_states(machines, before, result.operation, proposal)


QUESTIONS = (
    "what does {} drink?",
    "how does {} take a drink?",
    "which drink would {} order?",
    "what is {}'s usual drink?",
)


def half_states(
    machines: Machines, before: set[str], operation: str, proposal: tuple[str, str]
) -> list[str]:
    a, problems = machines.a, []
    status = _git(a, "status", "--porcelain", "--", "MEMORY.md", "memory", "DREAMS.md")
    if status.stdout.strip():
        problems.append(f"uncommitted memory change: {status.stdout.split()[-1]}")
    problems += [f"{name} left behind" for name in LEFT_BEHIND if (a / name).exists()]
    if _git(a, "fsck", "--no-progress", "--no-dangling").returncode:
        problems.append("git fsck failed")
    after = committed_lines(a)
    if lost := before - after:
        reverted = "Revert " in _git(a, "log", "-3", "--format=%s").stdout
        if not (operation == "revert" and reverted and all("revert bench" in x for x in lost)):
            problems.append(f"committed lines lost: {sorted(lost)[:2]}")
    if operation == "dream":
        diary = _git(a, "show", "HEAD:DREAMS.md").stdout
        accepted = f"**{proposal[0]}** · add · accepted" in diary
        kept = proposal[1].rstrip(".") in _git(a, "show", "HEAD:MEMORY.md").stdout
        if accepted != kept:
            problems.append(
                f"DREAMS.md says {'accepted' if accepted else 'open'}, MEMORY.md "
                f"{'holds' if kept else 'lacks'} the line"
            )
    remote = committed_lines(machines.remote)
    if missing := (after | committed_lines(machines.b)) - remote:
        problems.append(f"the remote lacks {len(missing)} committed lines")
    return problems


def committed_lines(repo: Path) -> set[str]:
    """The non-blank lines of the memory files in `repo`'s HEAD (a bare remote's too)."""
    rev = "HEAD"
    listed = _git(repo, "ls-tree", "-r", "--name-only", rev).stdout.split()
    lines: set[str] = set()
    for name in listed:
        if name == "MEMORY.md" or (name.startswith("memory/") and name.endswith(".md")):
            text = _git(repo, "show", f"{rev}:{name}").stdout
            lines |= {f"{name}: {line.strip()}" for line in text.splitlines() if line.strip()}
    return lines


def _stamp(path: Path) -> int | None:
    """When `path` last changed (None: absent): a sign is a file that appears or changes."""
    try:
        return path.stat().st_mtime_ns
    except FileNotFoundError:
        return None


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)


def summary(results: list[Round]) -> dict[str, Any]:
    by_operation = {
        op: {
            "rounds": sum(r.operation == op for r in results),
            "killed": sum(r.operation == op and r.outcome == "killed" for r in results),
            "half_states": sum(r.operation == op and bool(r.problems) for r in results),
        }
        for op in OPERATIONS
    }
    return {
        "rounds": len(results),
        "kills": sum(r.outcome == "killed" for r in results),
        "half_states": sum(bool(r.problems) for r in results),
        "by_operation": by_operation,
        "problems": [f"{r.number} {r.operation}: {p}" for r in results for p in r.problems],
        "seconds_per_round": round(sum(r.seconds for r in results) / max(1, len(results)), 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=18)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="JSON on stdout, progress on stderr")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cairn-kills-ops-") as folder:
        report = summary(run_rounds(args.rounds, args.seed, Path(folder)))
    if not args.json:
        print(f"{'operation':<10}{'rounds':>8}{'killed':>8}{'half states':>13}")
        for op, row in report["by_operation"].items():
            print(f"{op:<10}{row['rounds']:>8}{row['killed']:>8}{row['half_states']:>13}")
    print(json.dumps(report, indent=2), file=sys.stdout if args.json else sys.stderr)
    return 1 if report["half_states"] else 0


if __name__ == "__main__":
    raise SystemExit(main())

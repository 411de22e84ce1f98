"""Benchmark what of a corpus of pasted secrets reaches a sync remote: the target is none.

Run: `python -m bench.secrets_remote [--json] [--per-style 1]`.

The corpus of `bench.secrets_corpus` goes into a real workspace two ways: half through the
model's `memory_append` tool (the memory door and its secrets policy), half written into a
daily note by hand, as an editor would (the outside-edit path, which commits what it finds at
the next sync). Then the workspace syncs with a bare remote. A push the scan stops is unblocked
as a user would, by `redact_unpushed(apply=True)`, and synced again. Every object of the remote
(`git cat-file --batch-all-objects`) is then searched for every case's secret.

Baseline in the same run: the same corpus written to the same kind of workspace by plain git
(`git add` and `git commit`, `git push`), which is what a memory without a detector sends.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.secrets_corpus import Case, secrets
from shell.events.sync import SyncFailed, SyncFinished
from shell.git.store import GitStore
from shell.memory.files.door import MemoryFiles
from shell.memory.tools import memory_tools
from shell.sync import SyncEngine
from shell.tools.toolbox import CallContext
from shell.workspace import ATTRIBUTES, ATTRIBUTES_FILE, seed_workspace

IDENTITY = {"author_name": "Bench", "author_email": "bench@localhost"}
DAY = "2026-12-01"


def _clock() -> datetime:
    return datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def _git(cwd: Path, *args: str, data: bytes | None = None) -> bytes:
    done = subprocess.run(["git", *args], cwd=cwd, input=data, capture_output=True, check=True)
    return done.stdout


def _bare(path: Path) -> Path:
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(path)], check=True)
    return path


def remote_bytes(remote: Path) -> bytes:
    """Every object of `remote`, as stored (blobs, trees, commits), one after another."""
    return _git(remote, "cat-file", "--batch-all-objects", "--batch", "--unordered")


def reached(cases: list[Case], remote: Path) -> list[Case]:
    """The cases whose secret (or a private key's body line) is in some object of `remote`."""
    stored = remote_bytes(remote)
    return [
        case
        for case in cases
        if any(part.encode() in stored for part in (case.value, *case.body) if len(part) >= 8)
    ]


async def through_cairn(cases: list[Case], work: Path) -> dict[str, Any]:
    root, remote = work / "ws", _bare(work / "remote.git")
    root.mkdir()
    created = seed_workspace(root)
    (root / ATTRIBUTES_FILE).write_text(ATTRIBUTES, encoding="utf-8")
    store = GitStore(root, clock=_clock, **IDENTITY)
    store.ensure_repo()
    store.commit([*created, ATTRIBUTES_FILE], "workspace: seed")
    files = MemoryFiles(root, store)
    [append] = [
        t
        for t in memory_tools(files, today=lambda: DAY, origin=lambda: "bench")
        if t.name == "memory_append"
    ]
    by_tool, by_hand = cases[::2], cases[1::2]
    context = CallContext(call_id="bench")
    refused = 0
    for case in by_tool:
        result = await append.call({"text": case.text}, context=context)
        refused += result.error is not None
    note = root / "memory" / f"{DAY}.md"
    with note.open("a", encoding="utf-8") as edited:
        edited.write("".join(f"- {case.text}\n" for case in by_hand))
    engine = SyncEngine(root, clock=_clock, **IDENTITY)
    first = engine.add_remote(str(remote))
    blocked = isinstance(first[-1], SyncFailed)
    unblocked = False
    if blocked:
        engine.redact_unpushed(apply=True)
        unblocked = isinstance(engine.sync()[-1], SyncFinished)
    leaked = reached(cases, remote)
    return {
        "cases": len(cases),
        "through memory_append": len(by_tool),
        "refused by memory_append": refused,
        "by hand (outside edit)": len(by_hand),
        "first push blocked": blocked,
        "pushed after redact_unpushed": unblocked,
        "secrets on the remote": len(leaked),
        "leaked kinds": sorted({case.kind for case in leaked}),
    }


def through_git(cases: list[Case], work: Path) -> dict[str, Any]:
    root, remote = work / "plain", _bare(work / "plain.git")
    (root / "memory").mkdir(parents=True)
    _git(work, "init", "-q", "-b", "main", str(root))
    (root / "memory" / f"{DAY}.md").write_text("".join(f"- {c.text}\n" for c in cases))
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=b", "-c", "user.email=b@l", "commit", "-qm", "notes")
    _git(root, "push", "-q", str(remote), "main")
    return {"cases": len(cases), "secrets on the remote": len(reached(cases, remote))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--per-style", type=int, default=1)
    args = parser.parse_args()
    cases = secrets(args.per_style)
    with tempfile.TemporaryDirectory() as tmp:
        cairn = asyncio.run(through_cairn(cases, Path(tmp)))
        git = through_git(cases, Path(tmp))
    if args.json:
        print(json.dumps({"cairn": cairn, "plain git": git}, indent=2))
        return
    print(f"| {'':32} | {'Cairn':>8} | {'plain git':>9} |")
    print(f"| {'-' * 32} | {'-' * 8}: | {'-' * 9}: |")
    for key, value in cairn.items():
        other = git.get(key, "")
        if key == "leaked kinds":
            value = ", ".join(value) or "none"
        print(f"| {key:32} | {value!s:>8} | {other!s:>9} |")


if __name__ == "__main__":
    main()

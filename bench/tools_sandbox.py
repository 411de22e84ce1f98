"""What the sandbox costs a command: `run_command("true")` in bubblewrap, in bubblewrap and a
cgroup of its own (where one can be made: as Cairn runs it then), unsandboxed, and a bare
`/bin/sh -c true` subprocess, interleaved in the same run (`bench.tools` prints it).

Run alone: `python -m bench.tools_sandbox [--runs 50] [--json]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from shell.config import ToolSettings
from shell.tools.project import cgroup
from shell.tools.project.command import command_tool
from shell.tools.project.outputs import OutputStore
from shell.tools.project.root import ProjectRoot
from shell.tools.project.sandbox import Sandbox
from shell.tools.toolbox import Tool

TARGET_ADDED_MS = 50.0
"""The p50 a sandboxed `run_command` (with its cgroup, where there is one) may add over a bare
`/bin/sh -c true`."""
WARMUP = 3


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = (len(ordered) - 1) * q / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _git_project(folder: Path) -> Path:
    """An empty repository: the sandbox reads its core.hooksPath at every call."""
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder


async def _bare(cwd: Path) -> None:
    process = await asyncio.create_subprocess_exec("/bin/sh", "-c", "true", cwd=cwd)
    await process.wait()


async def sandbox_cost(runs: int) -> dict[str, Any]:
    """p50 and p95 (ms) of each way to run `true`, and what the sandbox adds."""
    if (reason := Sandbox().unavailable()) is not None:
        return {"skipped": reason}
    workdir = Path(tempfile.mkdtemp(prefix="cairn-bench-sandbox-"))
    try:
        project = _git_project(workdir / "project")
        root, outputs = ProjectRoot(project), OutputStore(workdir / "outputs")

        def tool(sandbox: Sandbox | None) -> Tool:
            return command_tool(root, outputs, ToolSettings(), sandbox=sandbox)

        tools = {"sandboxed": tool(Sandbox(cgroups=False)), "unsandboxed": tool(None)}
        if (hierarchy := cgroup.available()) is not None:
            tools["cgroup"] = tool(Sandbox())
        samples: dict[str, list[float]] = {who: [] for who in [*tools, "sh"]}
        for i in range(WARMUP + runs):
            order = list(samples)
            turn = i % len(order)
            for who in order[turn:] + order[:turn]:  # rotate who goes first
                started = time.perf_counter()
                if who == "sh":
                    await _bare(project)
                else:
                    result = await tools[who].call({"command": "true"})
                    if result.error:
                        raise RuntimeError(f"{who}: {result.error}")
                if i >= WARMUP:
                    samples[who].append((time.perf_counter() - started) * 1000)
        rows = {
            who: {"p50_ms": percentile(values, 50), "p95_ms": percentile(values, 95)}
            for who, values in samples.items()
        }
        as_run = rows["cgroup" if "cgroup" in rows else "sandboxed"]["p50_ms"]
        return {
            "runs": runs,
            "rows": rows,
            "added_p50_ms": as_run - rows["sh"]["p50_ms"],
            "sandbox_alone_p50_ms": rows["sandboxed"]["p50_ms"] - rows["unsandboxed"]["p50_ms"],
            "cgroup_alone_p50_ms": as_run - rows["sandboxed"]["p50_ms"],
            "cgroup": hierarchy.describe() if hierarchy else "none here",
            "argv": Sandbox().argv("true", project, str(Path.home())),
        }
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def verdict(cost: dict[str, Any]) -> dict[str, Any] | None:
    if "added_p50_ms" not in cost:
        return None
    return {
        "target": f"sandboxed run_command `true`: p50 <= {TARGET_ADDED_MS:g} ms over /bin/sh -c",
        "measured": f"+{cost['added_p50_ms']:.1f} ms",
        "pass": cost["added_p50_ms"] <= TARGET_ADDED_MS,
    }


def print_cost(cost: dict[str, Any]) -> None:
    if "skipped" in cost:
        print(f"\nsandbox: not measured ({cost['skipped']})")
        return
    print(f"\nrun_command `true`, {cost['runs']} runs each, interleaved; ms")
    print("| how | p50 | p95 |")
    print("| --- | ---: | ---: |")
    for who, label in (
        ("cgroup", "run_command, bubblewrap + cgroup"),
        ("sandboxed", "run_command, bubblewrap"),
        ("unsandboxed", "run_command, unsandboxed"),
        ("sh", "bare /bin/sh -c true"),
    ):
        if row := cost["rows"].get(who):
            print(f"| {label} | {row['p50_ms']:.1f} | {row['p95_ms']:.1f} |")
    print(
        f"added over bare sh (p50), as Cairn runs it: {cost['added_p50_ms']:+.1f} ms; the sandbox "
        f"alone: {cost['sandbox_alone_p50_ms']:+.1f} ms; the cgroup ({cost['cgroup']}) alone: "
        f"{cost['cgroup_alone_p50_ms']:+.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    cost = asyncio.run(sandbox_cost(args.runs))
    if args.json:
        print(json.dumps(cost, indent=2))
    else:
        print_cost(cost)
        if check := verdict(cost):
            print(f"[{'ok' if check['pass'] else 'MISSED'}] {check['target']}: {check['measured']}")


if __name__ == "__main__":
    main()

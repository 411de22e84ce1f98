"""Benchmark the project tools: grep and list_files against rg alone, run_command's memory on
a 100 MB output, the sandbox's cost per command, and an MCP call's overhead.

Run: `python -m bench.tools [--json] [--files 20000] [--runs 20] [--skip-mcp]`.

- **Search.** A generated project (a tree of small Python and text files, half of them hidden
  by its .gitignore: a `build/` folder and `*.log` files; `git init`ed) is searched through
  Cairn's `grep` and `list_files` and, in the same run and interleaved, by the same rg
  command line as a bare subprocess (the floor). Target: Cairn's p50 ≤ 1.5 × the floor's.
- **Command output.** `run_command` on a command that prints 100 MB, while a thread samples
  this process's resident memory (VmRSS) every 20 ms. Target: growth ≤ 50 MB, with the result
  and the text streamed to the card bounded.
- **Sandbox.** `bench.tools_sandbox.sandbox_cost`: `run_command("true")` in bubblewrap and
  unsandboxed against a bare `/bin/sh -c true`. Target: ≤ 50 ms added at p50.
- **MCP.** `bench.tools_mcp.mcp_overhead`: the same tool call through the SDK and through
  Cairn's hub.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.tools_sandbox import percentile, print_cost, sandbox_cost, verdict
from shell.config import ToolSettings
from shell.events import Event
from shell.events.tools import CommandOutput
from shell.tools.project.command import command_tool
from shell.tools.project.outputs import OutputStore
from shell.tools.project.root import ProjectRoot
from shell.tools.toolbox import CallContext, Tool

TARGET_SEARCH_RATIO = 1.5
TARGET_RSS_GROWTH_MB = 50.0
BIG_OUTPUT_BYTES = 100_000_000
BIG_COMMAND = f"yes 0123456789abcdef0123456789abcdef0123456789 | head -c {BIG_OUTPUT_BYTES}"
WARMUP = 2
NEEDLE = "cairn_needle_marker"
"""A rare literal: in one visible file of 200 (and in hidden ones, which must not count)."""

# --- the generated project ------------------------------------------------------------------


def make_project(folder: Path, files: int) -> dict[str, int]:
    """A tree of `files` small files under `folder`, half of them git-ignored; `git init`ed."""
    (folder / ".gitignore").write_text("build/\n*.log\n", encoding="utf-8")
    visible = files // 2
    counts = {"visible": 0, "ignored": 0, "needles": 0}
    for i in range(files):
        hidden = i >= visible
        package, module = (i % visible) // 500, (i % visible) // 25 % 20
        if not hidden:
            path = folder / "src" / f"pkg{package:02d}" / f"mod{module:02d}" / f"file{i:05d}.py"
        elif i % 2:
            path = folder / "build" / f"pkg{package:02d}" / f"gen{i:05d}.py"
        else:
            path = folder / "logs" / f"pkg{package:02d}" / f"run{i:05d}.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_file_text(i, needle=i % 200 == 7), encoding="utf-8")
        counts["ignored" if hidden else "visible"] += 1
        counts["needles"] += int(i % 200 == 7 and not hidden)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return counts


def _file_text(i: int, *, needle: bool) -> str:
    lines = [f'"""Module {i}: generated for bench.tools."""', "", "import os", ""]
    for j in range(12):
        lines += [f"def handler_{i}_{j}(value: int) -> int:", f"    return value * {j} + {i}", ""]
    if needle:
        lines.append(f"# {NEEDLE}: the line grep looks for")
    return "\n".join(lines) + "\n"


# --- measuring --------------------------------------------------------------------------------


async def _rg_alone(argv: list[str], cwd: Path) -> None:
    process = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL
    )
    await process.communicate()


def _searches(rg: str) -> list[tuple[str, dict[str, Any], list[str]]]:
    """(name, Cairn's arguments, the same search as one rg command line)."""
    grep = [rg, "--no-config", "--line-number", "--no-heading", "--with-filename", "--null"]
    grep += ["--color", "never", "--max-columns", "500", "--max-columns-preview"]
    grep += ["--hidden", "--no-require-git", "--glob", "!.git"]
    files = [rg, "--no-config", "--files", "--hidden", "--no-require-git", "--glob", "!.git"]
    return [
        ("grep rare literal", {"pattern": NEEDLE}, [*grep, "--regexp", NEEDLE, "--", "."]),
        (
            "grep common regex",
            {"pattern": r"def handler_\d+_11\b"},
            [*grep, "--regexp", r"def handler_\d+_11\b", "--", "."],
        ),
        ("list_files all", {}, [*files, "--sort", "path", "--", "."]),
        (
            "list_files *.py in src/pkg01",
            {"glob": "*.py", "path": "src/pkg01"},
            [*files, "--sort", "path", "--glob", "*.py", "--", "src/pkg01"],
        ),
    ]


async def bench_search(files: int, runs: int) -> dict[str, Any]:
    from shell.tools.project.files import file_tools, find_rg

    rg = find_rg()
    if rg is None:
        return {"skipped": "rg not found"}
    workdir = Path(tempfile.mkdtemp(prefix="cairn-bench-tools-"))
    try:
        project = workdir / "project"
        project.mkdir()
        started = time.perf_counter()
        counts = make_project(project, files)
        build_s = time.perf_counter() - started
        tools = {t.name: t for t in file_tools(ProjectRoot(project), OutputStore(workdir / "out"))}
        rows = []
        for name, arguments, argv in _searches(rg):
            tool = tools[name.split()[0]]
            result = await tool.call(dict(arguments))
            if result.error:
                raise RuntimeError(f"{name}: {result.error}")
            samples: dict[str, list[float]] = {"cairn": [], "rg": []}
            for i in range(WARMUP + runs):
                for who in ("cairn", "rg") if i % 2 else ("rg", "cairn"):  # alternate the first
                    started = time.perf_counter()
                    if who == "cairn":
                        await tool.call(dict(arguments))
                    else:
                        await _rg_alone(argv, project)
                    if i >= WARMUP:
                        samples[who].append((time.perf_counter() - started) * 1000)
            cairn, floor = samples["cairn"], samples["rg"]
            payload = json.loads(result.content)
            rows.append(
                {
                    "search": name,
                    "found": payload.get("matchingLines", payload.get("total")),
                    "cairn_p50_ms": percentile(cairn, 50),
                    "cairn_p90_ms": percentile(cairn, 90),
                    "rg_p50_ms": percentile(floor, 50),
                    "rg_p90_ms": percentile(floor, 90),
                    "ratio_p50": percentile(cairn, 50) / percentile(floor, 50),
                }
            )
        return {"files": counts, "build_s": round(build_s, 1), "runs": runs, "rows": rows}
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class RssSampler:
    """This process's resident memory, sampled in a thread every `interval` seconds."""

    def __init__(self, interval: float = 0.02) -> None:
        self.interval = interval
        self.peak = _rss_mb()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.peak = max(self.peak, _rss_mb())

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss_mb())


async def bench_command() -> dict[str, Any]:
    if not sys.platform.startswith("linux"):
        return {"skipped": "no /proc/self/status"}
    workdir = Path(tempfile.mkdtemp(prefix="cairn-bench-command-"))
    try:
        tool: Tool = command_tool(
            ProjectRoot(workdir), OutputStore(workdir / "outputs"), ToolSettings()
        )
        await tool.call({"command": "echo warm"})  # the tool's own first-call imports
        events: list[Event] = []
        gc.collect()
        before = _rss_mb()
        started = time.perf_counter()
        with RssSampler() as sampler:
            result = await tool.call(
                {"command": BIG_COMMAND}, context=CallContext("bench", events.append)
            )
        seconds = time.perf_counter() - started
        payload = json.loads(result.content)
        shown = [e.text for e in events if isinstance(e, CommandOutput)]
        return {
            "command": BIG_COMMAND,
            "exit_code": payload.get("exitCode"),
            "output_bytes": payload.get("outputBytes"),
            "seconds": round(seconds, 2),
            "rss_before_mb": round(before, 1),
            "rss_growth_mb": round(sampler.peak - before, 1),
            "result_chars": len(result.content),
            "emitted_events": len(shown),
            "emitted_chars": sum(map(len, shown)),
            "largest_event_chars": max(map(len, shown), default=0),
        }
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


async def bench_mcp(rounds: int) -> dict[str, Any]:
    try:
        from bench.tools_mcp import mcp_overhead
    except ImportError:
        return {"skipped": "bench/tools_mcp.py missing"}
    try:
        return dict(await mcp_overhead(rounds))
    except Exception as error:  # a server that will not start must not lose the other figures
        return {"skipped": f"{type(error).__name__}: {error}"}


# --- the report -------------------------------------------------------------------------------


def verdicts(report: dict[str, Any]) -> list[dict[str, Any]]:
    checks = []
    for row in report["search"].get("rows", []):
        checks.append(
            {
                "target": f"{row['search']} p50 <= {TARGET_SEARCH_RATIO:g}x rg alone",
                "measured": f"{row['ratio_p50']:.2f}x",
                "pass": row["ratio_p50"] <= TARGET_SEARCH_RATIO,
            }
        )
    if sandbox := verdict(report["sandbox"]):
        checks.append(sandbox)
    command = report["command"]
    if "rss_growth_mb" in command:
        checks.append(
            {
                "target": f"100 MB output: RSS growth <= {TARGET_RSS_GROWTH_MB:g} MB, exit 0",
                "measured": f"{command['rss_growth_mb']:.1f} MB, exit {command['exit_code']}",
                "pass": command["rss_growth_mb"] <= TARGET_RSS_GROWTH_MB
                and command["exit_code"] == 0,
            }
        )
    return checks


def print_report(report: dict[str, Any]) -> None:
    print(f"project tools benchmark  ({report['started']}, {report['machine']})")
    search = report["search"]
    if "skipped" in search:
        print(f"search: not measured ({search['skipped']})")
    else:
        files = search["files"]
        print(
            f"\nproject: {files['visible'] + files['ignored']:,} files, {files['ignored']:,} of "
            f"them git-ignored (built in {search['build_s']} s); {search['runs']} runs each, "
            "interleaved; ms"
        )
        print("| search | found | cairn p50 | cairn p90 | rg p50 | rg p90 | cairn x rg |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for row in search["rows"]:
            print(
                f"| {row['search']} | {row['found']} | {row['cairn_p50_ms']:.1f} | "
                f"{row['cairn_p90_ms']:.1f} | {row['rg_p50_ms']:.1f} | {row['rg_p90_ms']:.1f} | "
                f"{row['ratio_p50']:.2f}x |"
            )
    command = report["command"]
    if "skipped" in command:
        print(f"\nrun_command: not measured ({command['skipped']})")
    else:
        print(f"\nrun_command `{command['command']}`")
        print(
            "| exit | output | took | RSS before | RSS growth | result | card events | card text |"
        )
        print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        print(
            f"| {command['exit_code']} | {command['output_bytes']:,} B | {command['seconds']} s | "
            f"{command['rss_before_mb']} MB | {command['rss_growth_mb']} MB | "
            f"{command['result_chars']:,} chars | {command['emitted_events']} | "
            f"{command['emitted_chars']:,} chars (largest {command['largest_event_chars']:,}) |"
        )
    print_cost(report["sandbox"])
    mcp = report["mcp"]
    if "skipped" in mcp:
        print(f"\nmcp: not measured ({mcp['skipped']})")
    else:
        print(
            f"\nMCP get_current_time, {report['mcp_rounds']} calls each: "
            + ", ".join(f"{key} {value:.2f}" for key, value in mcp.items())
        )
    print()
    for check in report["verdicts"]:
        mark = "ok" if check["pass"] else "MISSED"
        print(f"[{mark}] {check['target']}: {check['measured']}")


async def run(args: argparse.Namespace) -> dict[str, Any]:
    report: dict[str, Any] = {
        "started": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {sys.version.split()[0]}",
    }
    # The command first: the search's thousands of small results would blur its RSS baseline.
    report["command"] = await bench_command()
    report["sandbox"] = await sandbox_cost(max(args.runs, 30))
    report["search"] = await bench_search(args.files, args.runs)
    report["mcp_rounds"] = args.mcp_rounds
    report["mcp"] = {"skipped": "--skip-mcp"} if args.skip_mcp else await bench_mcp(args.mcp_rounds)
    report["verdicts"] = verdicts(report)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--mcp-rounds", type=int, default=30)
    parser.add_argument("--skip-mcp", action="store_true")
    args = parser.parse_args()
    report = asyncio.run(run(args))
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_report(report)


if __name__ == "__main__":
    main()

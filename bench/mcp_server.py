"""`cairn mcp`'s cost: memory_search through the server (the SDK's client over stdio, a real
`cairn mcp` process) against the same tool call in-process, on the same workspace and index;
and 4 clients appending at once (lines lost, commits made). Target: ≤ +5 ms p50 overhead.

    .venv/bin/python -m bench.mcp_server [--notes 200] [--rounds 200] [--appends 25]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

from shell.config import Settings, load_settings

TARGET_OVERHEAD_MS = 5.0
CLIENTS = 4
CAIRN = Path(sys.executable).parent / "cairn"
TOPICS = ["deploy", "coffee", "train", "invoice", "backup", "Oslo", "Tromsø", "kernel", "budget"]
QUERIES = [
    "when is the deploy window?",
    "how does Tom take his coffee",
    "which train does Ada ride",
    "invoice INV-2041",
    "where are the backups kept",
    "what is the budget for Q3",
    "kernel version on the build box",
    "office in Oslo",
]


def seed(ws: Path, notes: int) -> None:
    """`notes` daily notes of ten facts each, and a MEMORY.md, committed as a user's edits."""
    subprocess.run([str(CAIRN), "init", str(ws)], check=True, capture_output=True, env=_env(ws))
    day = date(2026, 1, 1)
    for n in range(notes):
        facts = [
            f"- {TOPICS[(n + i) % len(TOPICS)]} note {n}.{i}: fact number {n * 10 + i} "
            f"about {TOPICS[(n * 3 + i) % len(TOPICS)]}"
            for i in range(10)
        ]
        (ws / "memory" / f"{day + timedelta(days=n)}.md").write_text("\n".join(facts) + "\n")
    (ws / "MEMORY.md").write_text("# Memory\n- Our deploy window is Friday 14:00\n")
    subprocess.run(["git", "-C", str(ws), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(ws), "commit", "-qm", "seed"], check=True, env=_env(ws))


def _env(ws: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    return {**env, "CAIRN_CONFIG": str(ws.parent / "none.toml"), "CAIRN_WATCH": "false"}


def _settings(ws: Path) -> Settings:
    return replace(load_settings({"workspace": ws}), watch=False)


async def search_p50(ws: Path, rounds: int) -> tuple[float, float, float, float]:
    """p50 ms of memory_search in-process (the tool call, and the bare search under it) and
    through `cairn mcp`, interleaved call by call so that both see the same load; and the p50
    of what each call through the server cost beyond the tool's own time there (its round
    trip less the tool's duration the server says on stderr, to the millisecond)."""
    from shell.memory.service import RecallService

    recall = RecallService(_settings(ws))
    recall.sync("manual")
    tool = recall.tool()
    local, bare, remote = [], [], []
    said = ws.parent / "stderr.log"
    async with client(ws, "bench", said) as mcp:
        for n in range(-3, rounds):  # three rounds of warm-up
            query = QUERIES[n % len(QUERIES)]
            started = time.perf_counter()
            result = await tool.call({"query": query})
            local.append((time.perf_counter() - started) * 1000)
            assert result.error is None, result.error
            started = time.perf_counter()
            recall.searcher.search(query, max_results=6)
            bare.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            served = await mcp.call_tool("memory_search", {"query": query})  # type: ignore[attr-defined]
            remote.append((time.perf_counter() - started) * 1000)
            assert not served.is_error
    await recall.aclose()
    served = [
        float(found[1])
        for found in re.finditer(r"bench called memory_search \((\d+) ms\)", said.read_text())
    ]
    protocol = [trip - there for trip, there in zip(remote, served, strict=True)]
    p50 = [statistics.median(samples[3:]) for samples in (local, bare, remote, protocol)]
    return p50[0], p50[1], p50[2], p50[3]


@contextlib.asynccontextmanager
async def client(ws: Path, name: str, errlog: Path | None = None) -> AsyncIterator[object]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp_types import Implementation

    parameters = StdioServerParameters(
        command=str(CAIRN), args=["mcp", "--workspace", str(ws)], env=_env(ws)
    )
    with open(errlog, "w") if errlog else tempfile.TemporaryFile("w+") as log:  # noqa: ASYNC230
        transport = stdio_client(parameters, errlog=log)
        info = Implementation(name=name, version="1")
        async with Client(transport, client_info=info) as connected:  # type: ignore[arg-type]
            yield connected


async def appending(ws: Path, appends: int) -> dict[str, object]:
    """4 clients, each its own `cairn mcp`, appending `appends` lines each at once."""
    before = _git(ws, "rev-parse", "HEAD").strip()
    note = ws / "memory" / f"{date.today()}.md"

    async def one(number: int) -> list[float]:
        times = []
        async with client(ws, f"agent-{number}") as mcp:
            for line in range(appends):
                text = f"- agent {number} line {line}"
                started = time.perf_counter()
                result = await mcp.call_tool("memory_append", {"text": text})  # type: ignore[attr-defined]
                times.append((time.perf_counter() - started) * 1000)
                assert json.loads(result.content[0].text)["appended"] == 1
        return times

    started = time.perf_counter()
    times = await asyncio.gather(*(one(n) for n in range(CLIENTS)))
    wall = time.perf_counter() - started
    wanted = {f"- agent {n} line {i}" for n in range(CLIENTS) for i in range(appends)}
    present = set(note.read_text().splitlines()) if note.exists() else set()
    commits = _git(ws, "rev-list", f"{before}..HEAD").split()
    named = [
        len(
            _git(
                ws, "log", f"{before}..HEAD", f"--grep=mcp client agent-{n} ", "--format=%H"
            ).split()
        )
        for n in range(CLIENTS)
    ]
    return {
        "lines": len(wanted),
        "lost": len(wanted - present),
        "commits": len(commits),
        "commits_per_client": named,
        "append_p50_ms": statistics.median([t for ts in times for t in ts]),
        "wall_s": wall,
    }


def _git(ws: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ws), *args], check=True, capture_output=True, text=True
    ).stdout


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--notes", type=int, default=200, help="daily notes of ten facts")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--appends", type=int, default=25, help="appends per client")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        seed(ws, args.notes)
        local, bare, remote, protocol = await search_p50(ws, args.rounds)
        overhead = remote - local
        verdict = "met" if overhead <= TARGET_OVERHEAD_MS else "NOT met"
        print(f"memory_search over {args.notes * 10:,} facts, {args.rounds} calls each, p50:")
        print(f"  the search alone, in-process        {bare:7.2f} ms")
        print(f"  the memory_search tool, in-process  {local:7.2f} ms")
        print(f"  through cairn mcp (stdio, SDK)      {remote:7.2f} ms")
        target = f"target ≤ +{TARGET_OVERHEAD_MS:g}: {verdict}"
        print(f"  overhead                            {overhead:+7.2f} ms  ({target})")
        print(
            f"  the protocol's share of each call   {protocol:7.2f} ms  (round trip less the tool)"
        )
        found = await appending(ws, args.appends)
        print(f"{CLIENTS} clients appending {args.appends} lines each at once:")
        print(
            f"  {found['lines']} lines, {found['lost']} lost; {found['commits']} commits "
            f"(per client {found['commits_per_client']}); append p50 "
            f"{found['append_p50_ms']:.1f} ms; {found['wall_s']:.1f} s in all"
        )


if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    asyncio.run(main())

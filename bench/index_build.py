"""A ten-year workspace indexed from nothing, and again after a kill half way through.

    python -m bench.index_build [--days 3650] [--lines 41] [--embedder minilm] [--huge-mb 50]
        [--json]

A seeded workspace of `--days` daily notes (memory/YYYY-MM-DD.md, ~150k lines for ten years),
indexed by the production `MemoryIndex` in a fresh process each time, as `cairn index` would
start cold. Three measurements:

1. **a full build**: wall time, files, chunks, texts embedded, chunks/s and the process's peak
   RSS;
2. **a kill half way**: the same build in a new index, SIGKILLed once half of its texts are
   embedded, then run again to the end. The texts embedded twice are the work a kill cost
   (issue 34's target: only the file in flight);
3. **the floor, in the same run**: the embedder alone over a sample of the same chunk texts
   (texts/s), the rate a build cannot beat;
4. **a huge MEMORY.md** (`--huge-mb`, 50 by default; 0 skips it), alone in a workspace, as a sync
   could bring it: wall time, peak RSS, the units indexed and the line search sees it up to.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import signal
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from bench.dream_year import filler_line

FLOOR_SAMPLE = 2_000
"""Chunk texts the embedder alone embeds for the floor."""


def make_huge_memory(root: Path, megabytes: int, seed: int = 20261207) -> Path:
    """A workspace whose only memory file is a MEMORY.md of about `megabytes` MB of bullets."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    lines, size = ["# MEMORY.md"], 0
    while size < megabytes * 1_000_000:
        lines.append(filler_line(rng))
        size += len(lines[-1]) + 1
    (root / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def make_workspace(root: Path, days: int, lines: int, seed: int = 20261207) -> Path:
    """`days` daily notes ending yesterday, each a heading and `lines` seeded bullet lines."""
    rng = random.Random(seed)
    memory = root / "memory"
    memory.mkdir(parents=True, exist_ok=True)
    (root / "MEMORY.md").write_text("# MEMORY.md\n", encoding="utf-8")
    start = date(2016, 12, 7)
    for day in range(days):
        when = start + timedelta(days=day)
        body = "\n".join(filler_line(rng) for _ in range(lines))
        (memory / f"{when.isoformat()}.md").write_text(f"# {when}\n\n{body}\n", encoding="utf-8")
    return root


# --- the child: one build in this process ------------------------------------------------


def child(workspace: Path, index_dir: Path, embedder_kind: str) -> None:
    """Build the index, one JSON line per progress report on stdout, then the result."""
    from shell.events import IndexSynced, IndexSyncProgress
    from shell.memory.index.embed import load_embedder
    from shell.memory.index.memory_index import MemoryIndex

    embedder = load_embedder(embedder_kind, workspace / ".cairn" / "fastembed")
    index = MemoryIndex(workspace, embedder, index_dir=index_dir)

    def progress(event: IndexSyncProgress) -> None:
        print(json.dumps({"embedded": event.embedded, "to_embed": event.to_embed}), flush=True)

    started = time.perf_counter()
    synced = [e for e in index.sync(trigger="manual", progress=progress)]
    done = next(e for e in synced if isinstance(e, IndexSynced))
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = {
        "seconds": round(time.perf_counter() - started, 1),
        "files": done.files_changed,
        "chunks": done.chunks_total,
        "embedded": done.embedded,
        "peak_rss_mb": round(peak_kib / 1024),
        "capped": {c.path: c.indexed_to_line for c in done.capped},
    }
    print(json.dumps({"result": result}), flush=True)
    index.close()


def floor(workspace: Path, embedder_kind: str) -> dict[str, Any]:
    """The embedder alone over `FLOOR_SAMPLE` of the workspace's chunk texts."""
    from shell.memory.index.chunking import chunk_markdown
    from shell.memory.index.embed import load_embedder

    embedder = load_embedder(embedder_kind, workspace / ".cairn" / "fastembed")
    texts: list[str] = []
    for path in sorted((workspace / "memory").glob("*.md")):
        relative = path.relative_to(workspace).as_posix()
        texts += [c.text for c in chunk_markdown(relative, path.read_text(encoding="utf-8"))]
        if len(texts) >= FLOOR_SAMPLE:
            break
    texts = texts[:FLOOR_SAMPLE]
    embedder.embed(texts[:8])  # the model's load is not the floor's
    started = time.perf_counter()
    embedder.embed(texts)
    seconds = time.perf_counter() - started
    return {"texts": len(texts), "texts_per_s": round(len(texts) / seconds, 1)}


# --- the parent: runs the children ------------------------------------------------------


def run_child(
    workspace: Path, index_dir: Path, embedder: str, kill_at: float | None = None
) -> dict[str, Any]:
    """One build in a fresh process; with `kill_at`, SIGKILLed once that share of its texts is
    embedded ({"killed_at": texts embedded by then})."""
    command = [
        sys.executable,
        "-m",
        "bench.index_build",
        "--child",
        str(workspace),
        str(index_dir),
        "--embedder",
        embedder,
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    for line in process.stdout:
        report = json.loads(line)
        if "result" in report:
            process.wait()
            return dict(report["result"])
        to_embed, embedded = report["to_embed"], report["embedded"]
        if kill_at is not None and to_embed and embedded >= kill_at * to_embed:
            process.send_signal(signal.SIGKILL)
            process.wait()
            return {"killed_at": embedded, "to_embed": to_embed}
    process.wait()
    raise RuntimeError(f"the build ended without a result (exit {process.returncode})")


def bench(days: int, lines: int, embedder: str, huge_mb: int, workdir: Path) -> dict[str, Any]:
    huge: dict[str, Any] | None = None
    if huge_mb:
        memory = make_huge_memory(workdir / "huge", huge_mb)
        huge = {
            "megabytes": huge_mb,
            "lines": (memory / "MEMORY.md").read_text(encoding="utf-8").count("\n"),
            **run_child(memory, workdir / "index-huge", embedder),
        }
    workspace = make_workspace(workdir / "workspace", days, lines)
    full = run_child(workspace, workdir / "index-full", embedder)
    killed = run_child(workspace, workdir / "index-killed", embedder, kill_at=0.5)
    resumed = run_child(workspace, workdir / "index-killed", embedder)
    left = killed["to_embed"] - killed["killed_at"]
    return {
        "days": days,
        "lines": days * lines,
        "embedder": embedder,
        "full_build": {**full, "chunks_per_s": round(full["chunks"] / full["seconds"], 1)},
        "kill_half_way": {
            **killed,
            "embedded_after_restart": resumed["embedded"],
            "embedded_twice": resumed["embedded"] - left,
            "restart_seconds": resumed["seconds"],
        },
        "floor_embedder_alone": floor(workspace, embedder),
        "huge_memory": huge,
    }


def table(report: dict[str, Any]) -> str:
    full, kill, floor_ = (
        report["full_build"],
        report["kill_half_way"],
        report["floor_embedder_alone"],
    )
    return "\n".join(
        [
            f"{report['days']:,} notes, {report['lines']:,} lines, {report['embedder']}",
            f"  full build      {full['seconds']:>8} s  {full['files']:,} files  "
            f"{full['chunks']:,} chunks  {full['chunks_per_s']} chunks/s  "
            f"peak RSS {full['peak_rss_mb']} MB",
            f"  embedder alone  {floor_['texts_per_s']} texts/s over {floor_['texts']:,} texts",
            f"  killed at       {kill['killed_at']:,} of {kill['to_embed']:,} texts; the restart "
            f"embedded {kill['embedded_after_restart']:,} in {kill['restart_seconds']} s: "
            f"{kill['embedded_twice']:,} texts embedded twice",
            *_huge_line(report["huge_memory"]),
        ]
    )


def _huge_line(huge: dict[str, Any] | None) -> list[str]:
    if huge is None:
        return []
    seen = ", ".join(f"{path} to line {line:,}" for path, line in huge["capped"].items())
    return [
        f"  {huge['megabytes']} MB MEMORY.md  {huge['seconds']:>5} s  {huge['lines']:,} lines  "
        f"{huge['chunks']:,} units indexed ({seen or 'all'})  peak RSS {huge['peak_rss_mb']} MB"
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=3_650)
    parser.add_argument("--lines", type=int, default=41, help="bullet lines per note")
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--huge-mb", type=int, default=50, help="MEMORY.md size; 0 skips it")
    parser.add_argument("--json", action="store_true", help="JSON on stdout, table on stderr")
    parser.add_argument(
        "--child", nargs=2, metavar=("WORKSPACE", "INDEX_DIR"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.child:
        child(Path(args.child[0]), Path(args.child[1]), args.embedder)
        return 0
    with tempfile.TemporaryDirectory(prefix="cairn-index-build-") as workdir:
        report = bench(args.days, args.lines, args.embedder, args.huge_mb, Path(workdir))
    print(table(report), file=sys.stderr if args.json else sys.stdout)
    if args.json:
        print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

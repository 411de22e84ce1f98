"""Benchmark citation checks: are the marks right after a script edits the cited files, and
what do the checks add to a search?

Run: `python -m bench.stale_citations [--json] [--lines 600] [--files 30] [--seed 7]`.

A project of `--files` source files (80 to 200 lines each) and a workspace whose MEMORY.md and
daily notes hold `--lines` facts, each citing one to three lines of a random file, written
through the real write door (which records the hashes). A seeded script then edits a random
subset of the files: lines added above (the cited text moves down), lines changed in place,
the file deleted, the file truncated to a third; the others are left alone. The expected mark
of every citation comes from the file texts before and after, compared line by line (never
from a hash): the same text at the same lines is fresh; missing file or lines is gone; other
text is stale (with `moved` when the old text is found elsewhere in the file).

Two counts: every citation of every memory line (what `cairn index --stale` reads), and every
citation shown on the hits of one search per fact (the real `MemorySearch` with MiniLM, the
default embedder, unless `--embedder` names another), each hit's checks compared with the
oracle. Then the time: the same
searches with the checks and without them (`check_citations=False`), interleaved, in the same
run, and the checks' own timing (`timings_ms["citations"]`).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("LANCEDB_LOG", "error")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import argparse
import json
import random
import statistics
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shell.git.store import GitStore
from shell.memory.citations import refs
from shell.memory.citations.scan import checked_lines
from shell.memory.citations.source import ProjectSource
from shell.memory.citations.stamp import CitationStamper
from shell.memory.files.door import MemoryFiles
from shell.memory.index.embed import load_embedder
from shell.memory.index.memory_index import MemoryIndex
from shell.memory.search.pipeline import MemorySearch
from shell.tools.project.root import ProjectRoot

EDITS = ("moved", "changed", "deleted", "truncated", "untouched")
WEIGHTS = (0.2, 0.2, 0.1, 0.1, 0.4)
WORDS = (
    "parser cache worker router ledger queue token socket bundle schema index shard tenant "
    "budget signal sampler buffer cursor"
).split()


@dataclass(frozen=True)
class Fact:
    key: str
    path: str
    start: int
    end: int


def source_file(rng: random.Random, name: str) -> str:
    lines = []
    for n in range(rng.randint(80, 200)):
        word = rng.choice(WORDS)
        lines.append(f"    {word}_{n} = compute_{word}({rng.randint(0, 10**6)})  # {name}")
    return "\n".join(lines) + "\n"


def build(
    root: Path, n_files: int, n_lines: int, seed: int
) -> tuple[Path, MemoryFiles, list[Fact]]:
    rng = random.Random(seed)
    project = root / "project"
    (project / "src").mkdir(parents=True)
    names = [f"src/mod_{i}.py" for i in range(n_files)]
    for name in names:
        (project / name).write_text(source_file(rng, name))
    workspace = root / "ws"
    (workspace / "memory").mkdir(parents=True)
    git = GitStore(workspace)
    git.ensure_repo()
    files = MemoryFiles(workspace, git, citations=CitationStamper(ProjectRoot(project)))
    facts, by_file = [], {}
    for n in range(n_lines):
        name = rng.choice(names)
        source = (project / name).read_text().splitlines()
        start = rng.randint(1, len(source) - 2)
        end = start + rng.randint(0, 2)
        key = f"zq{n:04d}"
        cited = f"{name}#L{start}" if end == start else f"{name}#L{start}-L{end}"
        wrapped = rng.choice(("({})", "`{}`", "{}", "[{}]"))
        word = source[start - 1].split("_")[0].strip()  # a fact names what its lines say
        line = f"- Fact {key}: the {word} step lives in " + wrapped.format(cited)
        target = "MEMORY.md" if n % 3 == 0 else f"memory/2026-11-{n % 28 + 1:02d}.md"
        by_file.setdefault(target, []).append(line)
        facts.append(Fact(key, name, start, end))
    for target, lines in by_file.items():  # one write per file: the door hashes each line
        files.append(target, "\n".join(lines), reason="tool")
    return project, files, facts


def edit(project: Path, rng: random.Random) -> dict[str, str]:
    """The script: one edit kind per file, seeded."""
    done = {}
    for path in sorted((project / "src").iterdir()):
        kind = rng.choices(EDITS, WEIGHTS)[0]
        lines = path.read_text().splitlines(keepends=True)
        if kind == "moved":
            path.write_text(
                "".join(f"# added {k}\n" for k in range(rng.randint(1, 9))) + "".join(lines)
            )
        elif kind == "changed":
            for at in rng.sample(range(len(lines)), k=len(lines) // 4):
                lines[at] = f"    changed_{at} = None\n"
            path.write_text("".join(lines))
        elif kind == "deleted":
            path.unlink()
        elif kind == "truncated":
            path.write_text("".join(lines[: len(lines) // 3]))
        done[path.relative_to(project).as_posix()] = kind
    return done


def oracle(before: dict[str, list[str]], project: Path, fact: Fact) -> str:
    """The mark a citation should get, from the texts alone."""
    path = project / fact.path
    if not path.exists():
        return "gone"
    now = path.read_text().splitlines()
    if fact.end > len(now):
        return "gone"
    old = before[fact.path][fact.start - 1 : fact.end]
    return "fresh" if now[fact.start - 1 : fact.end] == old else "stale"


def moved_to(before: dict[str, list[str]], project: Path, fact: Fact) -> str:
    """Where the cited text is now in a file whose lines moved down: the nearest match."""
    old = before[fact.path][fact.start - 1 : fact.end]
    now = (project / fact.path).read_text().splitlines()
    for first in range(len(now) - len(old) + 1):
        if [line.rstrip() for line in now[first : first + len(old)]] == [x.rstrip() for x in old]:
            return refs.line_range(first + 1, first + len(old))
    return ""


def run(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="cairn-stale-") as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        project, files, facts = build(root, args.files, args.lines, args.seed)
        written = time.perf_counter() - started
        before = {
            p.relative_to(project).as_posix(): p.read_text().splitlines()
            for p in (project / "src").iterdir()
        }
        edits = edit(project, random.Random(args.seed + 1))
        expected = {f.key: oracle(before, project, f) for f in facts}
        by_key = {f.key: f for f in facts}
        kind_of = {f.key: edits[f.path] for f in facts}

        source = ProjectSource(ProjectRoot(project))
        stale_started = time.perf_counter()
        everything = checked_lines(files.root, source, {"fresh", "stale", "gone", "unchecked"})
        scan_ms = (time.perf_counter() - stale_started) * 1000
        whole: Counter[tuple[str, str, bool]] = Counter()
        repointed = Counter[bool]()
        for found in everything:
            key = found.text.split("Fact ")[1][:6]
            whole[(kind_of[key], expected[key], found.check.mark == expected[key])] += 1
            if kind_of[key] == "moved" and expected[key] == "stale":
                repointed[found.check.moved_to == moved_to(before, project, by_key[key])] += 1

        embedder = load_embedder(args.embedder, root / "fastembed")
        index = MemoryIndex(files.root, embedder, index_dir=root / "index")
        index.sync()
        checked = MemorySearch(index, project=ProjectRoot(project))
        plain = MemorySearch(index, check_citations=False)
        queries = [f"Fact {f.key}" for f in facts[: args.queries]]
        for query in queries[:5]:  # warm-up
            checked.search(query)
            plain.search(query)
        on_hits: Counter[tuple[str, str, bool]] = Counter()
        with_ms, without_ms, checks_ms = [], [], []
        for query in queries:
            t0 = time.perf_counter()
            result = checked.search(query, max_results=6, min_score=0.0)
            with_ms.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            plain.search(query, max_results=6, min_score=0.0)
            without_ms.append((time.perf_counter() - t0) * 1000)
            checks_ms.append(result.timings_ms.get("citations", 0.0))
            for hit in result.hits:
                for line in hit.snippet.splitlines():
                    if "Fact zq" not in line:
                        continue
                    key = line.split("Fact ")[1][:6]
                    shown = {c.citation: c.mark for c in hit.citations}
                    mark = shown.get(refs.find(line)[0].name)  # None: not checked, wrong
                    on_hits[(kind_of[key], expected[key], mark == expected[key])] += 1
        index.close()
        return {
            "lines": args.lines,
            "files": args.files,
            "seed": args.seed,
            "embedder": args.embedder,
            "write_s": round(written, 2),
            "edits": dict(Counter(edits.values())),
            "all_lines": _rows(whole),
            "on_hits": _rows(on_hits),
            "scan_ms": round(scan_ms, 1),
            "moved_repointed": {"citations": sum(repointed.values()), "correct": repointed[True]},
            "queries": len(queries),
            "search_ms_with": _spread(with_ms),
            "search_ms_without": _spread(without_ms),
            "checks_ms": _spread(checks_ms),
            "facts": len(by_key),
        }


def _rows(counts: Counter[tuple[str, str, bool]]) -> list[dict[str, Any]]:
    rows = []
    for kind in EDITS:
        for mark in ("fresh", "stale", "gone"):
            right, wrong = counts[(kind, mark, True)], counts[(kind, mark, False)]
            if right or wrong:
                rows.append(
                    {"edit": kind, "expected": mark, "citations": right + wrong, "correct": right}
                )
    return rows


def _spread(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "p50": round(statistics.median(ordered), 2),
        "p95": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
    }


def print_report(report: dict[str, Any]) -> None:
    print(
        f"{report['lines']} cited lines over {report['files']} files (seed {report['seed']}), "
        f"written through the door in {report['write_s']} s; edits by file: {report['edits']}"
    )
    for title, rows in (
        ("every memory line (cairn index --stale)", report["all_lines"]),
        (f"on the hits of {report['queries']} searches", report["on_hits"]),
    ):
        print(f"\n{title}\n")
        print("| file edit | expected mark | citations | correct | rate |")
        print("| --- | --- | ---: | ---: | ---: |")
        total = right = 0
        for row in rows:
            total += row["citations"]
            right += row["correct"]
            rate = row["correct"] / row["citations"]
            print(
                f"| {row['edit']} | {row['expected']} | {row['citations']} "
                f"| {row['correct']} | {rate:.1%} |"
            )
        print(f"| **all** | | **{total}** | **{right}** | **{right / max(total, 1):.1%}** |")
    moved = report["moved_repointed"]
    print(
        f"\nstale citations whose text moved, re-pointed to the right range: "
        f"{moved['correct']}/{moved['citations']}"
    )
    print(f"scan of every line: {report['scan_ms']} ms")
    print(
        f"\nsearch time, {report['queries']} queries, {report['embedder']}, "
        "with and without interleaved in the same run\n"
    )
    print("| search | p50 ms | p95 ms |")
    print("| --- | ---: | ---: |")
    for name, key in (
        ("with citation checks", "search_ms_with"),
        ("without", "search_ms_without"),
        ("the checks alone (timings_ms.citations)", "checks_ms"),
    ):
        print(f"| {name} | {report[key]['p50']} | {report[key]['p95']} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=600)
    parser.add_argument("--files", type=int, default=30)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--embedder", default="minilm", choices=("minilm", "bge-small", "hash"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = run(args)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_report(report)


if __name__ == "__main__":
    main()

"""Benchmark memory_search against the in-process floor and LanceDB, re-sync cost, and embedding.

Run: `python -m bench.search [--json] [--sizes 1000,10000,100000] [--queries 50]`.
See bench/README.md for how to read the output and the figures measured on a project machine.
The synthetic inputs are in bench/corpus.py, the baselines measured alongside in bench/baselines.py,
and the targets and the printed table in bench/search_report.py.
"""

from __future__ import annotations

import os

# One BLAS thread, as the cairn CLI runs (widgets/cli.py): the vector leg is one memory-bound
# matrix-vector product, so extra BLAS threads only contend. OpenBLAS reads this when numpy loads.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("LANCEDB_LOG", "error")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

import argparse
import contextlib
import gc
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from bench.baselines import TOP_K, Floor, LanceFlatHybrid, RawOnnx
from bench.corpus import CHUNKS_PER_PATH, DIM, SEED, Corpus, hundred_token_texts, make_corpus
from bench.search_report import print_table, verdicts

WARMUP = 5
BENCH_CLOCK = datetime(2026, 11, 30, tzinfo=UTC)


class InjectedEmbedder:
    """Hands the pipeline a precomputed query vector: the query embedding is not timed."""

    name = "bench-injected"
    dim = DIM

    def __init__(self, queries: Sequence[str], vectors: np.ndarray) -> None:
        self._vectors = dict(zip(queries, vectors, strict=True))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        raise RuntimeError("the benchmark loads vectors with add_synthetic; nothing is embedded")

    def embed_query(self, text: str) -> np.ndarray:
        return self._vectors[text]


# --- Cairn, the system under test ---------------------------------------------------------


def build_cairn(corpus: Corpus, directory: Path) -> Any:
    from shell.memory.index.chunking import make_chunk
    from shell.memory.index.memory_index import MemoryIndex
    from shell.memory.search.pipeline import MemorySearch

    chunks = [
        make_chunk(
            f"memory/topic-{i // CHUNKS_PER_PATH:05d}.md",
            (i % CHUNKS_PER_PATH) * 4 + 1,
            (i % CHUNKS_PER_PATH) * 4 + 3,
            text,
        )
        for i, text in enumerate(corpus.texts)
    ]
    embedder = InjectedEmbedder(corpus.queries, corpus.query_vectors)
    index = MemoryIndex(directory / "workspace", embedder, index_dir=directory / "index")
    index.add_synthetic(chunks, corpus.vectors)
    return MemorySearch(index, clock=lambda: BENCH_CLOCK)


# --- measuring ----------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


def timed(call: Callable[[], Any]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def bench_size(size: int, queries: int, workdir: Path) -> dict[str, Any]:
    corpus = make_corpus(size, queries + WARMUP)
    builds: dict[str, float] = {}
    started = time.perf_counter()
    cairn = build_cairn(corpus, workdir / f"cairn-{size}")
    builds["cairn"] = time.perf_counter() - started
    started = time.perf_counter()
    floor = Floor(corpus)
    builds["floor"] = time.perf_counter() - started
    started = time.perf_counter()
    lance = LanceFlatHybrid(corpus, workdir / f"lance-{size}")
    builds["lancedb"] = time.perf_counter() - started

    samples: dict[str, list[float]] = {
        k: [] for k in ("hybrid", "vector", "keyword", "merge", "floor", "lancedb")
    }
    overlap: list[float] = []

    def run_cairn(text: str) -> Any:
        # min_score 0: every candidate passes, so order + cite run on the whole pool
        return cairn.search(text, max_results=TOP_K, min_score=0.0)

    systems: list[tuple[str, Callable[[str, np.ndarray], Any]]] = [
        ("hybrid", lambda text, _q: run_cairn(text)),
        ("floor", floor.query),
        ("lancedb", lance.query),
    ]
    gc.collect()
    gc.disable()
    try:
        for i, (text, qvec) in enumerate(zip(corpus.queries, corpus.query_vectors, strict=True)):
            order = systems[i % 3 :] + systems[: i % 3]  # interleave, rotating who goes first
            results: dict[str, Any] = {}
            for name, call in order:
                started = time.perf_counter()
                results[name] = call(text, qvec)
                elapsed = (time.perf_counter() - started) * 1000
                if i >= WARMUP:
                    samples[name].append(elapsed)
            if i >= WARMUP:
                timings = results["hybrid"].timings_ms
                for leg in ("vector", "keyword", "merge"):
                    samples[leg].append(timings.get(leg, float("nan")))
                if results["hybrid"].mode != "hybrid":
                    raise RuntimeError(f"search degraded: {results['hybrid'].degraded_reason}")
                overlap.append(len(set(_cairn_rows(results["hybrid"])) & set(results["floor"])))
    finally:
        gc.enable()
    summary = {
        name: {"p50": percentile(v, 50), "p95": percentile(v, 95)} for name, v in samples.items()
    }
    floor_p50 = summary["floor"]["p50"]
    return {
        "size": size,
        "queries": queries,
        "build_s": {k: round(v, 2) for k, v in builds.items()},
        "ms": summary,
        "ratio_to_floor": {
            k: summary[k]["p50"] / floor_p50 for k in ("hybrid", "lancedb") if floor_p50 > 0
        },
        "top10_overlap_with_floor": statistics.fmean(overlap) / TOP_K if overlap else None,
    }


def _cairn_rows(result: Any) -> list[int]:
    rows = []
    for hit in result.hits:
        topic = int(hit.path.removeprefix("memory/topic-").removesuffix(".md"))
        rows.append(topic * CHUNKS_PER_PATH + (hit.start_line - 1) // 4)
    return rows


# --- re-sync of one edited file -----------------------------------------------------------


def bench_resync(workdir: Path, target_chunks: int = 10_000, edits: int = 11) -> dict[str, Any]:
    """Edit one file of a ~10k-chunk index and time `sync()`.

    The index uses the hash embedder, so the sync time is the index's own cost; the MiniLM
    embedding of the chunks the edit changed is measured separately on the same texts.
    """
    from shell.memory.index.chunking import chunk_markdown
    from shell.memory.index.embed import HashEmbedder, MiniLMEmbedder
    from shell.memory.index.memory_index import MemoryIndex

    rng = np.random.default_rng(SEED)
    corpus = make_corpus(2_000, 0)
    workspace = workdir / "resync" / "workspace"
    (workspace / "memory").mkdir(parents=True)

    def paragraph() -> str:
        return corpus.texts[int(rng.integers(0, len(corpus.texts)))]

    def note(lines: int) -> str:
        return "\n".join(["# notes", *(paragraph() for _ in range(lines))]) + "\n"

    per_file = len(chunk_markdown("memory/x.md", note(20)))
    files = max(1, -(-target_chunks // per_file))
    for i in range(files):
        (workspace / "memory" / f"topic-{i:05d}.md").write_text(note(20), encoding="utf-8")
    index = MemoryIndex(workspace, HashEmbedder(), index_dir=workdir / "resync" / "index")
    started = time.perf_counter()
    index.sync(trigger="manual")
    initial_s = time.perf_counter() - started
    chunks_total = index.status().get("chunks")

    minilm = MiniLMEmbedder(workdir / "fastembed")
    minilm.embed(["warm up the model"])
    sync_ms: list[float] = []
    embed_ms: list[float] = []
    changed_counts: list[int] = []
    for edit in range(edits + 1):
        path = workspace / "memory" / f"topic-{int(rng.integers(0, files)):05d}.md"
        relative = path.relative_to(workspace).as_posix()
        before = {c.hash for c in chunk_markdown(relative, path.read_text(encoding="utf-8"))}
        lines = path.read_text(encoding="utf-8").splitlines()
        lines[int(rng.integers(1, len(lines)))] = paragraph()
        text = "\n".join(lines) + "\n"
        path.write_text(text, encoding="utf-8")
        changed = [c.text for c in chunk_markdown(relative, text) if c.hash not in before]
        gc.disable()
        try:
            elapsed_sync = timed(lambda: index.sync(trigger="manual"))
            elapsed_embed = timed(lambda: minilm.embed(changed))  # noqa: B023 (runs here)
        finally:
            gc.enable()
        if edit > 0:  # the first edit warms caches
            sync_ms.append(elapsed_sync)
            embed_ms.append(elapsed_embed)
            changed_counts.append(len(changed))
    return {
        "chunks": chunks_total,
        "files": files,
        "initial_sync_s": round(initial_s, 2),
        "edits": edits,
        "changed_chunks_median": statistics.median(changed_counts),
        "sync_ms_p50": percentile(sync_ms, 50),
        "sync_ms_max": max(sync_ms),
        "minilm_embed_ms_p50": percentile(embed_ms, 50),
    }


# --- embedding throughput -----------------------------------------------------------------


def bench_throughput(workdir: Path, texts_per_round: int = 32, rounds: int = 8) -> dict[str, Any]:
    """Texts/s of MiniLMEmbedder and of raw onnxruntime, alternating in short rounds so that
    drift in the shared machine's speed hits both alike."""
    from shell.memory.index.embed import MiniLMEmbedder

    minilm = MiniLMEmbedder(workdir / "fastembed")
    raw = RawOnnx(minilm.batch_size)
    texts = hundred_token_texts(texts_per_round * rounds, raw.tokenizer)
    warm = texts[: minilm.batch_size]
    agreement = float(np.min(np.sum(minilm.embed(warm) * raw.embed(warm), axis=1)))
    seconds: dict[str, float] = {"minilm": 0.0, "raw": 0.0}
    gc.disable()
    try:
        for round_ in range(rounds):
            batch = texts[round_ * texts_per_round : (round_ + 1) * texts_per_round]
            pair = [("minilm", minilm.embed), ("raw", raw.embed)]
            for name, embed in pair if round_ % 2 == 0 else pair[::-1]:
                seconds[name] += timed(lambda embed=embed, batch=batch: embed(batch)) / 1000
    finally:
        gc.enable()
    total = texts_per_round * rounds
    rates = {name: total / spent for name, spent in seconds.items()}
    return {
        "texts": total,
        "batch_size": minilm.batch_size,
        "tokens_per_text": "96-99 + [CLS]/[SEP]",
        "minilm_texts_per_s": rates["minilm"],
        "raw_onnxruntime_texts_per_s": rates["raw"],
        "ratio": rates["minilm"] / rates["raw"],
        "min_cosine_minilm_vs_raw": agreement,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.search", description=__doc__)
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the figures as JSON on stdout (the table goes to stderr)",
    )
    parser.add_argument("--sizes", default="1000,10000,100000", help="corpus sizes in chunks")
    parser.add_argument("--queries", type=int, default=50, help="timed queries per size")
    parser.add_argument("--skip-resync", action="store_true")
    parser.add_argument("--skip-throughput", action="store_true")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]

    report: dict[str, Any] = {
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{os.cpu_count()} cpus",
        "sizes": [],
    }
    workdir = Path(tempfile.mkdtemp(prefix="cairn-bench-"))
    try:
        for size in sizes:
            report["sizes"].append(bench_size(size, args.queries, workdir))
            shutil.rmtree(workdir / f"cairn-{size}", ignore_errors=True)
            shutil.rmtree(workdir / f"lance-{size}", ignore_errors=True)
        if not args.skip_resync:
            report["resync"] = bench_resync(workdir)
        if not args.skip_throughput:
            report["throughput"] = bench_throughput(workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    report["targets"] = verdicts(report)
    if args.json:  # the table goes to stderr so stdout is pure JSON
        with contextlib.redirect_stdout(sys.stderr):
            print_table(report)
        print(json.dumps(report, indent=2))
    else:
        print_table(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

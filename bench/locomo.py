"""Recall on LoCoMo: does memory_search find the turn that answers a question months later?

Run: `python -m bench.locomo [--data DIR] [--json] [--embedder minilm|bge-small]`. DIR holds
LoCoMo conversations (one JSON object per file, or the official `locomo10.json` list); see
bench/README.md for where to get it. Per conversation: a fresh workspace whose daily notes are the
sessions (`bench.locomo_data`), the production index and `memory_search` with the clock at the
last session, once with the cross-encoder (reranked) and once without (the hybrid order).

Baselines on the same units, cited by the same windows, in the same run: BM25 alone (stdlib
sqlite FTS5, as a plain keyword search would), cosine alone (the index's own vectors: Cairn's
vector leg), Cairn's own keyword leg alone (LanceDB's stemmed BM25 over each unit and the one
before it), and the oracle union of BM25 and cosine (hit when either is). The conversations named
by `--held-out` are reported apart: the rerank constants were set on the others.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("LANCEDB_LOG", "error")

import argparse
import contextlib
import json
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from bench.locomo_data import DEFAULT_DATA, KS, Conversation, Fts5, Tally, cite, hit_at, load
from bench.locomo_report import SYSTEMS, report, table
from shell.memory.index.embed import Embedder, load_embedder
from shell.memory.index.memory_index import MemoryIndex
from shell.memory.search.pipeline import MemorySearch, SearchResult
from shell.memory.search.rerank import CrossEncoder, Reranker

HELD_OUT = "42,43"
"""Conversations the rerank constants were not set on (their names end with these)."""


@contextlib.contextmanager
def indexed(conversation: Conversation, embedder: Embedder) -> Iterator[MemoryIndex]:
    """A fresh workspace holding the conversation's notes, its index built (in a temp dir)."""
    with tempfile.TemporaryDirectory(prefix="cairn-locomo-") as tmp:
        workspace = Path(tmp)
        for path, lines in conversation.notes.items():
            (workspace / path).parent.mkdir(parents=True, exist_ok=True)
            (workspace / path).write_text("\n".join(lines) + "\n", encoding="utf-8")
        index = MemoryIndex(workspace, embedder, index_dir=workspace / ".cairn" / "index")
        index.sync(trigger="manual")
        try:
            yield index
        finally:
            index.close()


def _timed(search: MemorySearch, question: str, out: list[float]) -> SearchResult:
    started = time.perf_counter()
    result = search.search(question, max_results=max(KS))
    out.append((time.perf_counter() - started) * 1000)
    return result


def _ranges(result: SearchResult) -> list[tuple[str, int, int]]:
    return [(h.path, h.start_line, h.end_line) for h in result.hits]


def run_conversation(
    conversation: Conversation, embedder: Embedder, reranker: Reranker | None, out: dict[str, Any]
) -> None:
    started = time.perf_counter()
    with indexed(conversation, embedder) as index:
        out["build_s"].append(time.perf_counter() - started)
        clock = lambda: conversation.last  # noqa: E731
        hybrid = MemorySearch(index, clock=clock)
        reranked = MemorySearch(index, clock=clock, reranker=reranker) if reranker else None
        files = [index.file_units(path) for path in conversation.notes]
        units = [unit for file_units, _ in files for unit in file_units]
        chunks = {unit.id: unit for unit in units}
        matrix = np.concatenate([vectors for _, vectors in files])
        fts = Fts5(units)
        mine = out["by_conversation"].setdefault(conversation.name, {})
        for question, category, evidence in conversation.questions:
            answered = _timed(hybrid, question, out["latency_ms"]["hybrid"])
            found = {"hybrid": _ranges(answered)}
            if reranked is not None:
                answered = _timed(reranked, question, out["latency_ms"]["rerank"])
                found["rerank"] = _ranges(answered)
            out["best"].append(answered.best_score or 0.0)  # over every candidate read
            out["cited"].extend(h.snippet for h in answered.hits)
            qvec = embedder.embed_query(question)
            by_cosine = [units[i].id for i in np.argsort(-(matrix @ qvec))[:200]]
            by_keyword = [i for i, _ in index.keyword_candidates(question, 200)]
            hits = {name: hit_at(ranges, evidence) for name, ranges in found.items()}
            hits["bm25"] = hit_at(cite(index, chunks, fts.rank(question)), evidence)
            hits["cosine"] = hit_at(cite(index, chunks, by_cosine), evidence)
            hits["keyword"] = hit_at(cite(index, chunks, by_keyword), evidence)
            hits["union"] = {k: hits["bm25"][k] or hits["cosine"][k] for k in KS}
            for name, hit in hits.items():
                out[name].add(category, hit)
                mine.setdefault(name, Tally()).add(category, hit)


def unrelated_best(
    conversations: list[Conversation], embedder: Embedder, reranker: Reranker | None
) -> list[float]:
    """The best relevance of each question searched in the next conversation's notes."""
    scores: list[float] = []
    for i, conversation in enumerate(conversations):
        other = conversations[(i + 1) % len(conversations)]
        if other is conversation:
            return []
        with indexed(other, embedder) as index:
            search = MemorySearch(index, clock=lambda other=other: other.last, reranker=reranker)
            for question, _, _ in conversation.questions:
                scores.append(search.search(question, min_score=0.0).best_score or 0.0)
    return scores


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--json", action="store_true", help="JSON on stdout, table on stderr")
    parser.add_argument("--skip-calibration", action="store_true")
    parser.add_argument("--embedder", default="minilm", choices=("minilm", "bge-small"))
    parser.add_argument("--no-rerank", action="store_true", help="only the hybrid order")
    parser.add_argument("--threads", type=int, default=None, help="the cross-encoder's threads")
    parser.add_argument("--held-out", default=HELD_OUT, help="conversations reported apart")
    args = parser.parse_args(argv)
    if not args.data.exists():
        parser.error(f"no LoCoMo data at {args.data}: pass --data DIR (see bench/README.md)")
    conversations = load(args.data)
    cache = Path(tempfile.mkdtemp(prefix="cairn-fastembed-"))
    embedder = load_embedder(args.embedder, cache)
    reranker = None if args.no_rerank else CrossEncoder(threads=args.threads)
    out: dict[str, Any] = {
        "build_s": [],
        "latency_ms": {"hybrid": [], "rerank": []},
        "best": [],
        "cited": [],
        "by_conversation": {},
        **{name: Tally() for name in SYSTEMS},
    }
    for conversation in conversations:
        run_conversation(conversation, embedder, reranker, out)
        print(f"  {conversation.name}: {len(conversation.questions)} questions", file=sys.stderr)
    unrelated = [] if args.skip_calibration else unrelated_best(conversations, embedder, reranker)
    held_out = tuple(name.strip() for name in args.held_out.split(",") if name.strip())
    result = report(out, unrelated, len(conversations), held_out)
    result["embedder"] = embedder.name
    result["reranker"] = reranker.name if reranker else None
    show: Callable[[str], None] = (
        (lambda line: print(line, file=sys.stderr)) if args.json else print
    )
    for line in table(result):
        show(line)
    if args.json:
        print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Recall on LoCoMo: does memory_search find the turn that answers a question months later?

Run: `python -m bench.locomo [--data DIR] [--json]`. DIR holds LoCoMo conversations (one JSON
object per file, or the official `locomo10.json` list); see bench/README.md for where to get it.
Per conversation: a fresh workspace whose daily notes are the sessions (`memory/YYYY-MM-DD.md`,
one `- Speaker: text` line per turn under a `## <time>` heading), the production index and
`memory_search` with the clock at the last session. A question is hit at k when one of its
evidence lines lies inside a range that one of the top k hits cites.

Baselines on the same units, cited by the same windows, in the same run: BM25 alone (stdlib
sqlite FTS5, as a plain keyword search would), cosine alone (the index's own MiniLM vectors:
Cairn's vector leg), Cairn's own keyword leg alone (LanceDB's stemmed BM25 over each unit and
the one before it), and the oracle union of BM25 and cosine (hit when either is).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("LANCEDB_LOG", "error")

import argparse
import contextlib
import json
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from shell.memory.index.chunking import Chunk
from shell.memory.index.embed import TOKENIZER_DIR, MiniLMEmbedder
from shell.memory.index.memory_index import MemoryIndex
from shell.memory.paths import daily_note
from shell.memory.search.pipeline import MemorySearch
from shell.memory.search.windows import FileViews

KS = (1, 5, 10)
SYSTEMS = {
    "cairn": "cairn memory_search",
    "bm25": "BM25 alone (sqlite FTS5)",
    "cosine": "cosine alone (MiniLM, cairn's vector leg)",
    "keyword": "cairn's keyword leg alone (LanceDB BM25)",
    "union": "oracle union BM25 | cosine",
}
THRESHOLDS = (0.3, 0.35, 0.4, 0.45, 0.5)
"""minScore values whose effect the calibration reports."""
CATEGORIES = (1, 2, 3, 4)
DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo"
Range = tuple[str, int, int]


@dataclass
class Conversation:
    name: str
    notes: dict[str, list[str]]
    questions: list[tuple[str, int, list[tuple[str, int]]]]  # question, category, evidence
    last: datetime


def _when(text: str) -> datetime:
    return datetime.strptime(text, "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def load(data: Path) -> list[Conversation]:
    """Every conversation under `data` (a folder of JSON files or one file)."""
    files = sorted(data.glob("*.json")) if data.is_dir() else [data]
    samples: list[dict[str, Any]] = []
    for path in files:
        loaded = json.loads(path.read_text(encoding="utf-8"))
        for sample in loaded if isinstance(loaded, list) else [loaded]:
            sample.setdefault("_name", sample.get("sample_id", path.stem))
            samples.append(sample.get("conversation", sample) | {"qa": sample["qa"]})
    return [_conversation(sample) for sample in samples]


def _conversation(sample: dict[str, Any]) -> Conversation:
    notes: dict[str, list[str]] = {}
    where: dict[str, tuple[str, int]] = {}
    last = None
    n = 1
    while f"session_{n}_date_time" in sample:
        turns = sample.get(f"session_{n}") or []
        if turns:
            when = _when(sample[f"session_{n}_date_time"])
            path = daily_note(when.date())
            lines = notes.setdefault(path, [])
            lines.extend([""] if lines else [])
            lines.append(f"## {when:%H:%M}")
            for turn in turns:
                text = " ".join(turn["text"].split())
                if turn.get("blip_caption"):
                    text += f" [shares a photo: {turn['blip_caption']}]"
                lines.append(f"- {turn['speaker']}: {text}")
                where[turn["dia_id"]] = (path, len(lines))
            last = when
        n += 1
    questions = []
    for qa in sample["qa"]:
        if qa.get("category") not in CATEGORIES:
            continue
        ids = [i.strip() for e in qa.get("evidence", []) for i in re.split(r"[;,]", e)]
        evidence = [where[i] for i in ids if i in where]
        if evidence:
            questions.append((str(qa["question"]), int(qa["category"]), evidence))
    assert last is not None, "a conversation without sessions"
    return Conversation(str(sample.get("_name", "?")), notes, questions, last)


def hit_at(ranges: list[Range], evidence: list[tuple[str, int]]) -> dict[int, bool]:
    return {
        k: any(p == ep and s <= line <= e for p, s, e in ranges[:k] for ep, line in evidence)
        for k in KS
    }


@dataclass
class Tally:
    hits: dict[int, dict[int, list[bool]]] = field(default_factory=dict)  # k -> cat -> hits

    def add(self, category: int, hit: dict[int, bool]) -> None:
        for k, value in hit.items():
            self.hits.setdefault(k, {}).setdefault(category, []).append(value)

    def rate(self, k: int, category: int | None = None) -> float:
        values = [v for c, vs in self.hits.get(k, {}).items() if category in (None, c) for v in vs]
        return sum(values) / len(values) if values else 0.0


def cite(index: MemoryIndex, chunks: dict[str, Chunk], ranked_ids: list[str]) -> list[Range]:
    """Cites ranked units the way memory_search does: each grown into its window, no repeats."""
    files = FileViews(index.file_units)
    ranges: list[Range] = []
    for chunk_id in ranked_ids:
        cited = files.claim(chunks[chunk_id])
        if cited is None:
            continue
        files.take(cited)
        ranges.append((cited[0].path, cited[0].start_line, cited[-1].end_line))
        if len(ranges) == max(KS):
            break
    return ranges


class Fts5:
    """Plain BM25 over the units' own text: stdlib sqlite FTS5, default tokenizer."""

    def __init__(self, units: list[Chunk]) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE u USING fts5(id UNINDEXED, text)")
        self.db.executemany("INSERT INTO u VALUES (?, ?)", [(u.id, u.text) for u in units])

    def rank(self, query: str) -> list[str]:
        terms = " OR ".join(f'"{w}"' for w in re.findall(r"\w+", query.lower()))
        if not terms:
            return []
        rows = self.db.execute(
            "SELECT id FROM u WHERE u MATCH ? ORDER BY bm25(u) LIMIT 200", (terms,)
        )
        return [row[0] for row in rows]


@contextlib.contextmanager
def indexed(conversation: Conversation, embedder: MiniLMEmbedder) -> Iterator[MemoryIndex]:
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


def run_conversation(conversation: Conversation, embedder: MiniLMEmbedder, out: dict) -> None:
    started = time.perf_counter()
    with indexed(conversation, embedder) as index:
        out["build_s"].append(time.perf_counter() - started)
        search = MemorySearch(index, clock=lambda: conversation.last)
        files = [index.file_units(path) for path in conversation.notes]
        units = [unit for file_units, _ in files for unit in file_units]
        chunks = {unit.id: unit for unit in units}
        matrix = np.concatenate([vectors for _, vectors in files])
        fts = Fts5(units)
        for question, category, evidence in conversation.questions:
            started = time.perf_counter()
            result = search.search(question, max_results=max(KS))
            out["latency_ms"].append((time.perf_counter() - started) * 1000)
            cairn = [(h.path, h.start_line, h.end_line) for h in result.hits]
            out["cited_lines"].extend(h.snippet for h in result.hits)
            out["best"].append(result.best_score or 0.0)
            qvec = embedder.embed_query(question)
            by_cosine = [units[i].id for i in np.argsort(-(matrix @ qvec))[:200]]
            bm25 = hit_at(cite(index, chunks, fts.rank(question)), evidence)
            cosine = hit_at(cite(index, chunks, by_cosine), evidence)
            by_keyword = [i for i, _ in index.keyword_candidates(question, 200)]
            out["keyword"].add(category, hit_at(cite(index, chunks, by_keyword), evidence))
            out["cairn"].add(category, hit_at(cairn, evidence))
            out["bm25"].add(category, bm25)
            out["cosine"].add(category, cosine)
            out["union"].add(category, {k: bm25[k] or cosine[k] for k in KS})
        index.close()


def unrelated_best(conversations: list[Conversation], embedder: MiniLMEmbedder) -> list[float]:
    """The best relevance of each question searched in the next conversation's notes."""
    scores: list[float] = []
    for i, conversation in enumerate(conversations):
        other = conversations[(i + 1) % len(conversations)]
        if other is conversation:
            return []
        with indexed(other, embedder) as index:
            search = MemorySearch(index, clock=lambda other=other: other.last)
            for question, _, _ in conversation.questions:
                scores.append(search.search(question, min_score=0.0).best_score or 0.0)
    return scores


def word_pieces(texts: list[str]) -> int:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(TOKENIZER_DIR / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return max((len(tokenizer.encode(t).ids) for t in texts), default=0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--json", action="store_true", help="JSON on stdout, table on stderr")
    parser.add_argument("--skip-calibration", action="store_true")
    args = parser.parse_args(argv)
    if not args.data.exists():
        parser.error(f"no LoCoMo data at {args.data}: pass --data DIR (see bench/README.md)")
    conversations = load(args.data)
    cache = Path(tempfile.mkdtemp(prefix="cairn-fastembed-"))
    embedder = MiniLMEmbedder(cache)
    out: dict[str, Any] = {
        "build_s": [],
        "latency_ms": [],
        "cited_lines": [],
        "best": [],
        **{name: Tally() for name in SYSTEMS},
    }
    for conversation in conversations:
        run_conversation(conversation, embedder, out)
        print(f"  {conversation.name}: {len(conversation.questions)} questions", file=sys.stderr)
    unrelated = [] if args.skip_calibration else unrelated_best(conversations, embedder)
    report = _report(out, unrelated, len(conversations))
    show: Callable[[str], None] = (
        (lambda line: print(line, file=sys.stderr)) if args.json else print
    )
    for line in _table(report):
        show(line)
    if args.json:
        print(json.dumps(report, indent=2))
    return 0


def _report(out: dict[str, Any], unrelated: list[float], conversations: int) -> dict[str, Any]:
    systems = {}
    for name in SYSTEMS:
        tally: Tally = out[name]
        systems[name] = {
            f"hit@{k}": {
                "all": round(tally.rate(k), 3),
                **{str(c): round(tally.rate(k, c), 3) for c in CATEGORIES},
            }
            for k in KS
        }
    relevant = out["best"]
    return {
        "conversations": conversations,
        "questions": len(relevant),
        "systems": systems,
        "search_p50_ms": round(statistics.median(out["latency_ms"]), 1),
        "index_build_s_per_conversation": round(statistics.median(out["build_s"]), 1),
        "max_cited_word_pieces": word_pieces(out["cited_lines"]),
        "relevance": {
            "answerable_best_p1_p5_p50": _percentiles(relevant, (1, 5, 50)),
            "unrelated_best_p5_p50_p95": _percentiles(unrelated, (5, 50, 95)),
            "passing": {
                str(t): {"answerable": _share(relevant, t), "unrelated": _share(unrelated, t)}
                for t in THRESHOLDS
            },
        },
    }


def _percentiles(values: list[float], points: tuple[int, ...]) -> list[float]:
    return [round(float(np.percentile(values, p)), 3) for p in points] if values else []


def _share(values: list[float], threshold: float) -> float | None:
    return round(sum(v >= threshold for v in values) / len(values), 3) if values else None


def _table(report: dict[str, Any]) -> list[str]:
    lines = [
        f"LoCoMo recall: {report['questions']} questions (categories 1-4), "
        f"{report['conversations']} conversations",
        "",
        "| system | hit@1 | hit@5 | hit@10 | hit@5 cat 1 | cat 2 | cat 3 | cat 4 |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, label in SYSTEMS.items():
        s = report["systems"][name]
        cats = " | ".join(f"{s['hit@5'][str(c)]:.3f}" for c in CATEGORIES)
        lines.append(
            f"| {label} | {s['hit@1']['all']:.3f} | {s['hit@5']['all']:.3f} | "
            f"{s['hit@10']['all']:.3f} | {cats} |"
        )
    hit5 = {name: report["systems"][name]["hit@5"]["all"] for name in SYSTEMS}
    best_leg = max(hit5["bm25"], hit5["cosine"], hit5["keyword"])
    cairn = hit5["cairn"]
    relevance = report["relevance"]
    lines += [
        "",
        f"hit@5 over the best single leg: {cairn - best_leg:+.3f}",
        f"search p50 {report['search_p50_ms']} ms; index build "
        f"{report['index_build_s_per_conversation']} s per conversation (median)",
        f"largest cited window: {report['max_cited_word_pieces']} word pieces (limit 256)",
        "",
        "minScore calibration: the best candidate's relevance for each question in its own",
        "conversation (answerable) and in the next one's notes (unrelated: another person's life)",
        f"answerable p1/p5/p50 {relevance['answerable_best_p1_p5_p50']}, "
        f"unrelated p5/p50/p95 {relevance['unrelated_best_p5_p50_p95']}",
        "| minScore | answerable kept | unrelated passing |",
        "| ---: | ---: | ---: |",
    ]
    for threshold, share in relevance["passing"].items():
        lines.append(f"| {threshold} | {share['answerable']} | {share['unrelated']} |")
    return lines


if __name__ == "__main__":
    raise SystemExit(main())

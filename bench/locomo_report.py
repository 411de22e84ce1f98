"""The report of `bench.locomo`: hit rates by system and category, the held-out conversations,
search latency, and the minScore calibration (answerable questions against another person's)."""

from __future__ import annotations

import statistics
from typing import Any

import numpy as np

from bench.locomo_data import CATEGORIES, KS, Tally
from shell.memory.index.embed import TOKENIZER_DIR

SYSTEMS = {
    "rerank": "cairn memory_search, reranked",
    "hybrid": "cairn memory_search, hybrid order (no rerank)",
    "bm25": "BM25 alone (sqlite FTS5)",
    "cosine": "cosine alone (cairn's vector leg)",
    "keyword": "cairn's keyword leg alone (LanceDB BM25)",
    "union": "oracle union BM25 | cosine",
}
THRESHOLDS = (0.2, 0.3, 0.35, 0.4, 0.45, 0.5)
"""minScore values whose effect the calibration reports."""


def _rates(tally: Tally) -> dict[str, dict[str, float]]:
    return {
        f"hit@{k}": {
            "all": round(tally.rate(k), 3),
            **{str(c): round(tally.rate(k, c), 3) for c in CATEGORIES},
        }
        for k in KS
    }


def _pooled(tallies: list[Tally]) -> Tally:
    pooled = Tally()
    for tally in tallies:
        for k, by_category in tally.hits.items():
            for category, values in by_category.items():
                pooled.hits.setdefault(k, {}).setdefault(category, []).extend(values)
    return pooled


def _split(out: dict[str, Any], held_out: tuple[str, ...]) -> dict[str, Any]:
    """hit@1/5/10 of Cairn's rows on the held-out conversations and on the others."""
    groups: dict[str, dict[str, list[Tally]]] = {"held_out": {}, "tuned_on": {}}
    for name, systems in out["by_conversation"].items():
        group = "held_out" if any(name.endswith(h) for h in held_out) else "tuned_on"
        for system, tally in systems.items():
            groups[group].setdefault(system, []).append(tally)
    names = {
        group: sorted(
            n
            for n in out["by_conversation"]
            if (group == "held_out") == any(n.endswith(h) for h in held_out)
        )
        for group in groups
    }
    return {
        group: {
            "conversations": names[group],
            "questions": len(
                [
                    v
                    for t in systems.get("hybrid", [])
                    for v in t.hits.get(1, {}).values()
                    for _ in v
                ]
            ),
            **{s: _rates(_pooled(t)) for s, t in systems.items() if s in ("rerank", "hybrid")},
        }
        for group, systems in groups.items()
    }


def _latency(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {
        "p50": round(statistics.median(values), 1),
        "p95": round(float(np.percentile(values, 95)), 1),
    }


def report(
    out: dict[str, Any], unrelated: list[float], conversations: int, held_out: tuple[str, ...]
) -> dict[str, Any]:
    systems = {name: _rates(out[name]) for name in SYSTEMS if out[name].hits}
    relevant = out["best"]
    return {
        "conversations": conversations,
        "questions": len(relevant),
        "systems": systems,
        "split": _split(out, held_out),
        "search_ms": {name: _latency(v) for name, v in out["latency_ms"].items()},
        "index_build_s_per_conversation": round(statistics.median(out["build_s"]), 1),
        "max_cited_word_pieces": word_pieces(out["cited"]),
        "relevance": {
            "answerable_best_p1_p5_p50": _percentiles(relevant, (1, 5, 50)),
            "unrelated_best_p5_p50_p95": _percentiles(unrelated, (5, 50, 95)),
            "passing": {
                str(t): {"answerable": _share(relevant, t), "unrelated": _share(unrelated, t)}
                for t in THRESHOLDS
            },
        },
    }


def word_pieces(texts: list[str]) -> int:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(TOKENIZER_DIR / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return max((len(tokenizer.encode(t).ids) for t in texts), default=0)


def _percentiles(values: list[float], points: tuple[int, ...]) -> list[float]:
    return [round(float(np.percentile(values, p)), 3) for p in points] if values else []


def _share(values: list[float], threshold: float) -> float | None:
    return round(sum(v >= threshold for v in values) / len(values), 3) if values else None


def _row(label: str, s: dict[str, dict[str, float]]) -> str:
    cats = " | ".join(f"{s['hit@5'][str(c)]:.3f}" for c in CATEGORIES)
    return (
        f"| {label} | {s['hit@1']['all']:.3f} | {s['hit@5']['all']:.3f} | "
        f"{s['hit@10']['all']:.3f} | {cats} |"
    )


def table(report: dict[str, Any]) -> list[str]:
    header = [
        "| system | hit@1 | hit@5 | hit@10 | hit@5 cat 1 | cat 2 | cat 3 | cat 4 |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    lines = [
        f"LoCoMo recall: {report['questions']} questions (categories 1-4), "
        f"{report['conversations']} conversations; embedder {report.get('embedder')}, "
        f"reranker {report.get('reranker')}",
        "",
        *header,
    ]
    for name, label in SYSTEMS.items():
        if name in report["systems"]:
            lines.append(_row(label, report["systems"][name]))
    for group, split in report["split"].items():
        lines += ["", f"{group}: {', '.join(split['conversations'])}", *header]
        lines += [_row(SYSTEMS[s], split[s]) for s in ("rerank", "hybrid") if s in split]
    relevance = report["relevance"]
    lines += [
        "",
        f"search latency ms (p50/p95): {report['search_ms']}",
        f"index build {report['index_build_s_per_conversation']} s per conversation (median); "
        f"largest cited window {report['max_cited_word_pieces']} word pieces",
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

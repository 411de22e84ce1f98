"""The verdicts and the printed table of `python -m bench.search`.

`bench.search` measures and collects its figures in one report dict; this module judges them
against the targets (hybrid p50 at the largest size, re-sync of one edited file, embedding
throughput against raw onnxruntime) and prints the table, the re-sync and throughput lines, and
the verdicts.
"""

from __future__ import annotations

from typing import Any

TARGET_HYBRID_P50_MS = 40.0
TARGET_RESYNC_MS = 50.0
TARGET_THROUGHPUT_RATIO = 0.9


def verdicts(report: dict[str, Any]) -> list[dict[str, Any]]:
    checks = []
    largest = max(report["sizes"], key=lambda r: r["size"], default=None)
    if largest is not None:
        p50 = largest["ms"]["hybrid"]["p50"]
        checks.append(
            {
                "target": (
                    f"hybrid p50 <= {TARGET_HYBRID_P50_MS:g} ms at {largest['size']:,} chunks"
                ),
                "measured": f"{p50:.1f} ms",
                "pass": p50 <= TARGET_HYBRID_P50_MS,
            }
        )
    if (resync := report.get("resync")) is not None:
        checks.append(
            {
                "target": f"re-sync one file <= {TARGET_RESYNC_MS:g} ms + embedding",
                "measured": (
                    f"{resync['sync_ms_p50']:.1f} ms + {resync['minilm_embed_ms_p50']:.1f} ms"
                ),
                "pass": resync["sync_ms_p50"] <= TARGET_RESYNC_MS,
            }
        )
    if (throughput := report.get("throughput")) is not None:
        checks.append(
            {
                "target": f"embedding >= {TARGET_THROUGHPUT_RATIO:.0%} of raw onnxruntime",
                "measured": f"{throughput['ratio']:.0%}",
                "pass": throughput["ratio"] >= TARGET_THROUGHPUT_RATIO,
            }
        )
    return checks


def print_table(report: dict[str, Any]) -> None:
    print(f"memory_search benchmark  ({report['started']}, {report['machine']})")
    print("query embedding injected, not timed; min_score 0 (the whole pool is ranked); top 10")
    header = (
        f"{'chunks':>8} {'system':<16} {'p50 ms':>8} {'p95 ms':>8} {'x floor':>8} {'build s':>8}"
    )
    print(header)
    print("-" * len(header))
    for size in report["sizes"]:
        rows = [
            ("cairn hybrid", "hybrid", "cairn"),
            ("  vector leg", "vector", None),
            ("  keyword leg", "keyword", None),
            ("  merge+cite", "merge", None),
            ("floor", "floor", "floor"),
            ("lancedb hybrid", "lancedb", "lancedb"),
        ]
        floor = size["ms"]["floor"]["p50"]
        for label, key, build in rows:
            ms = size["ms"][key]
            ratio = f"{ms['p50'] / floor:.1f}x" if build and key != "floor" else ""
            built = f"{size['build_s'][build]:.2f}" if build else ""
            print(
                f"{size['size']:>8,} {label:<16} {ms['p50']:>8.2f} {ms['p95']:>8.2f} "
                f"{ratio:>8} {built:>8}"
            )
        print(f"{'':>8} top-10 overlap with floor: {size['top10_overlap_with_floor']:.2f}")
    if (resync := report.get("resync")) is not None:
        print(
            f"\nre-sync one edited file in {resync['chunks']:,} chunks "
            f"({resync['files']:,} files): p50 {resync['sync_ms_p50']:.1f} ms "
            f"(max {resync['sync_ms_max']:.1f}) with the hash embedder; + MiniLM embedding of "
            f"the {resync['changed_chunks_median']:g} changed chunk(s): "
            f"p50 {resync['minilm_embed_ms_p50']:.1f} ms "
            f"(initial sync {resync['initial_sync_s']} s)"
        )
    if (tp := report.get("throughput")) is not None:
        print(
            f"\nembedding ~100-token texts, batch {tp['batch_size']}: MiniLMEmbedder "
            f"{tp['minilm_texts_per_s']:.1f} texts/s, raw onnxruntime "
            f"{tp['raw_onnxruntime_texts_per_s']:.1f} texts/s, ratio {tp['ratio']:.0%} "
            f"(min cosine between the two: {tp['min_cosine_minilm_vs_raw']:.4f})"
        )
    print("\ntargets")
    for check in report["targets"]:
        status = "PASS" if check["pass"] else "FAIL"
        print(f"  [{status}] {check['target']}: {check['measured']}")

"""The tables of `bench.dream --real`: per conversation, the tuned and held-out totals, all.

Each row (a conversation or a total) carries counts; `rates` adds precision (durable among the
first sweep's proposals), the junk share and coverage. Totals pool the counts, so a rate of a
total is over all its proposals, not a mean of rates.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

from bench.dream_world import WINDOW

TARGET_PRECISION = 0.8
TARGET_JUNK = 0.05
TARGET_COVERAGE = 0.7
TARGET_FALSE_UPDATES = 1
LABELS = ("durable", "borderline", "junk", "unlabelled")


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def rates(row: dict[str, Any]) -> dict[str, float | None]:
    first, coverage = row["first"], row["coverage"]
    return {
        "precision": _share(first["durable"], first["proposals"]),
        "junk_share": _share(first["junk"], first["proposals"]),
        **{
            f"coverage_{name}": _share(found["proposed"], found["eligible"])
            for name, found in coverage.items()
        },
    }


def _summed(rows: list[dict[str, Any]], name: str) -> dict[str, Any]:
    def add(values: list[Any]) -> Any:
        if all(isinstance(v, dict) for v in values):
            return {key: add([v[key] for v in values]) for key in values[0]}
        if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            return sum(values)
        return None

    keep = ("questions", "questions_failed", "turns", "labelled", "first", "repeated", "coverage")
    total = {key: add([row[key] for row in rows]) for key in keep}
    total["repeated"]["ended"] = None
    sweeps = [s for row in rows for s in row["sweep_s"]["each"]]
    total["sweep_s"] = {"median": round(statistics.median(sweeps), 2), "each": []}
    total["conversation"] = name
    total["conversations"] = len(rows)
    return total


def group_totals(conversations: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The tuned and held-out totals and all, each with its rates (and each conversation's)."""
    for row in conversations:
        row["rates"] = rates(row)
    groups = {
        "tuned": [row for row in conversations if not row["held_out"]],
        "held out": [row for row in conversations if row["held_out"]],
        "all": conversations,
    }
    totals = {name: _summed(rows, name) for name, rows in groups.items() if rows}
    for total in totals.values():
        total["rates"] = rates(total)
    return totals


def _rate(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


Row = tuple[str, Callable[[dict[str, Any]], str], str]


def _get(*keys: str) -> Callable[[dict[str, Any]], str]:
    def cell(row: dict[str, Any]) -> str:
        value: Any = row
        for key in keys:
            value = value[key]
        return _rate(value) if isinstance(value, float) or value is None else str(value)

    return cell


def _fraction(name: str) -> Callable[[dict[str, Any]], str]:
    def cell(row: dict[str, Any]) -> str:
        found = row["coverage"][name]
        return f"{found['proposed']}/{found['eligible']}"

    return cell


ROWS: list[Row] = [
    ("questions asked", _get("questions"), ""),
    ("turns labelled", lambda r: f"{r['labelled']}/{r['turns']}", ""),
    ("**first sweep**: proposals", _get("first", "proposals"), ""),
    *((f"… {label}", _get("first", label), "") for label in LABELS),
    ("**precision** (durable / all)", _get("rates", "precision"), f"≥ {TARGET_PRECISION}"),
    ("**junk share**", _get("rates", "junk_share"), f"≤ {TARGET_JUNK}"),
    ("repeated sweeps (until none proposed)", _get("repeated", "sweeps"), ""),
    ("… proposals over all sweeps", _get("repeated", "proposals"), ""),
    *((f"… {label}", _get("repeated", label), "") for label in LABELS),
    ("… of them updates", _get("repeated", "updates"), ""),
    ("… accepted (durable)", _get("repeated", "accepted"), ""),
    (f"… … past MEMORY.md's budget at {WINDOW:,} tokens", _get("repeated", "over_budget"), ""),
    ("… rejected", _get("repeated", "rejected"), ""),
    ("… errors", _get("repeated", "errors"), "0"),
    ("**coverage**, durable: proposed / recalled", _fraction("durable"), ""),
    ("… rate", _get("rates", "coverage_durable"), f"≥ {TARGET_COVERAGE}"),
    ("coverage, any label", _fraction("all"), ""),
    ("… rate", _get("rates", "coverage_all"), ""),
    ("coverage, durable, notes of any age", _fraction("durable_any_age"), ""),
    ("… rate", _get("rates", "coverage_durable_any_age"), ""),
    ("coverage, any label, notes of any age", _fraction("all_any_age"), ""),
    ("… rate", _get("rates", "coverage_all_any_age"), ""),
    ("sweep, median s", lambda r: f"{r['sweep_s']['median']:.2f}", ""),
]


def report(result: dict[str, Any]) -> str:
    conversations, totals = result["conversations"], result["totals"]
    columns = [row for row in conversations if not row["held_out"]]
    columns += [totals["tuned"]] if "tuned" in totals else []
    columns += [row for row in conversations if row["held_out"]]
    columns += [totals["held out"]] if "held out" in totals else []
    columns += [totals["all"]] if len(totals) > 2 or not columns else []
    names = [
        f"**{c['conversation']}**" if "conversations" in c else c["conversation"] for c in columns
    ]
    held_out = ", ".join(c["conversation"] for c in conversations if c["held_out"]) or "none"
    lines = [
        f"dreaming on LoCoMo: {len(conversations)} conversations, a first sweep without a model, "
        f"then sweeps with a reviewer (held out: {held_out})",
        "",
        "| measure | " + " | ".join(names) + " | target |",
        "| --- | " + " | ".join("---:" for _ in columns) + " | ---: |",
    ]
    for title, cell, target in ROWS:
        lines.append(f"| {title} | " + " | ".join(cell(c) for c in columns) + f" | {target} |")
    if (synthetic := result.get("synthetic_sweep_s")) is not None:
        lines.append(
            f"| sweep, the synthetic year (`bench.dream`) | {synthetic:.2f} s |"
            + " |" * len(columns)
        )
    ended = {c["conversation"]: c["repeated"]["ended"] for c in conversations}
    lines += ["", "repeated sweeps ended: " + ", ".join(f"{k}: {v}" for k, v in ended.items())]
    for c in conversations:
        if c["unlabelled_turns"]:
            lines.append(
                f"{c['conversation']}: proposed, no label: {', '.join(c['unlabelled_turns'])}"
            )
    if result.get("updates"):
        lines += ["", *_updates(result["updates"])]
    lines.append(f"\nthe run took {result.get('seconds', 0):.0f} s")
    return "\n".join(lines)


def _updates(found: dict[str, Any]) -> list[str]:
    lines = [
        "MEMORY.md facts that later notes change (the bench's own scenario, one sweep):",
        "",
        "| measure | result | target |",
        "| --- | ---: | ---: |",
        f"| true changes proposed as updates | {found['changes_updated']}/{found['changes']} "
        f"| {found['changes']}/{found['changes']} |",
        f"| … of them from another note | {len(found['changes_wrong_note'])} | 0 |",
        f"| false updates of still-true facts | {found['false_updates']}/{found['still_true']} "
        f"| ≤ {TARGET_FALSE_UPDATES} |",
        f"| updates with an add twin of the same note | {found['twins']} | 0 |",
        f"| adds proposed | {found['adds']} | |",
        f"| sweep | {found['sweep_s']:.2f} s | |",
    ]
    if found["changes_missed"]:
        lines.append("changes not proposed: " + "; ".join(found["changes_missed"]))
    for wrong in found["changes_wrong_note"] + found["false_updated"] + found["other_updates"]:
        lines.append(f"wrong update: “{wrong['line']}” ← “{wrong['note']}”")
    return lines

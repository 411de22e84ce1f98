"""LoCoMo for `bench.locomo`: the conversations as daily notes, the questions, and how a hit counts.

Per conversation: daily notes that are its sessions (`memory/YYYY-MM-DD.md`, one `- Speaker:
text` line per turn under a `## <time>` heading). A question is hit at k when one of its evidence
lines lies inside a range that one of the top k hits cites. Plain BM25 (stdlib sqlite FTS5) and
the citing of ranked units by the same windows Cairn uses are here too, for the baselines.
"""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from shell.memory.index.chunking import Chunk
from shell.memory.index.memory_index import MemoryIndex
from shell.memory.paths import daily_note
from shell.memory.search.windows import FileViews

KS = (1, 5, 10)
CATEGORIES = (1, 2, 3, 4)
DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo"
Range = tuple[str, int, int]


@dataclass
class Conversation:
    name: str
    notes: dict[str, list[str]]
    questions: list[tuple[str, int, list[tuple[str, int]]]]  # question, category, evidence
    last: datetime
    where: dict[str, tuple[str, int]] = field(default_factory=dict)
    """Each turn's line: dia_id -> (note path, 1-based line)."""
    asked: list[str] = field(default_factory=list)
    """Every question of categories 1–4, also those whose evidence names no turn here."""


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
    questions, asked = [], []
    for qa in sample["qa"]:
        if qa.get("category") not in CATEGORIES:
            continue
        asked.append(str(qa["question"]))
        ids = [i.strip() for e in qa.get("evidence", []) for i in re.split(r"[;,]", e)]
        evidence = [where[i] for i in ids if i in where]
        if evidence:
            questions.append((str(qa["question"]), int(qa["category"]), evidence))
    assert last is not None, "a conversation without sessions"
    return Conversation(str(sample.get("_name", "?")), notes, questions, last, where, asked)


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

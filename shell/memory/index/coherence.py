"""How alike neighbouring units are: the one measure that decides which units belong together.

The writer measures it once per sync (`Chunk.follows`). A cited window
(`shell.memory.search.windows`) grows only into neighbours that continue its topic, and the keyword
leg finds a unit through the words of the unit before it only when it continues that unit
(`MemoryIndex.keyword_candidates`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from shell.memory.index.chunking import Chunk, heading_text, is_heading

COHERENCE = 0.30
"""The cosine a unit needs to its neighbour to continue its topic, measured on vectors without
their heading's share (`without_headings`). Neighbouring LoCoMo turns: median 0.55, 94% at 0.30
or more. Thirty unrelated facts under a heading ("# 2026-12-01", "## Facts" or MEMORY.md's own):
at most one neighbour pair at 0.30, where 12-28 pairs passed with the heading left in. LoCoMo
hit@5: 0.892 at 0.30, 0.883 at 0.35, 0.895 at 0.25 (where facts under a heading start to be
cited three at a time); 0.893 with headings left in at 0.35."""


def without_headings(units: Sequence[Chunk], vectors: np.ndarray) -> np.ndarray:
    """The units' vectors with their heading's share taken out, to tell how alike neighbours are.

    A unit is embedded under its heading (`Chunk.embed_text`), so the units of one section share
    the heading's direction: thirty unrelated facts under MEMORY.md's "# MEMORY.md — curated
    long-term memory" had neighbour cosines of 0.34-0.56, and 28 of them were cited in windows of
    12-14 lines. The model pools its tokens by mean, so the heading weighs by its share of the
    tokens; that share of the heading unit's vector is subtracted, `v - t_h / (t_h + t) · v_h`,
    and the rows are renormalised. A short heading over long turns ("## 14:30") barely moves.

    Args:
        units: One file's units in line order (headings among them).
        vectors: Their unit-norm vectors, one row each.
    """
    out = np.array(vectors, dtype=np.float32, copy=True)
    heading: tuple[str, int] | None = None  # (its text, its row)
    for i, unit in enumerate(units):
        if not unit.heading and is_heading(unit.text):
            heading = (heading_text(unit.text), i)
        elif heading is not None and unit.heading == heading[0]:
            size = units[heading[1]].tokens
            out[i] -= size / (size + unit.tokens) * vectors[heading[1]]
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    deflated: np.ndarray = out / np.maximum(norms, 1e-9)
    return deflated


def adjacent_similarity(vectors: np.ndarray) -> np.ndarray:
    """Cosine of each unit with the next one (`len - 1` values) for unit-norm rows."""
    if len(vectors) < 2:
        return np.zeros(0, dtype=np.float32)
    similarity: np.ndarray = np.einsum("ij,ij->i", vectors[:-1], vectors[1:])
    return similarity


def with_follows(chunks: Sequence[Chunk], vectors: np.ndarray) -> list[Chunk]:
    """The chunks with `follows` set: each unit's `adjacent_similarity` to the one before it.

    Args:
        chunks: Units as `chunk_markdown` makes them, each file's in line order.
        vectors: Their unit-norm vectors, one row each.
    """
    out = list(chunks)
    start = 0
    for end in range(1, len(out) + 1):
        if end < len(out) and out[end].path == out[start].path:
            continue
        adjacent = adjacent_similarity(without_headings(out[start:end], vectors[start:end]))
        for i, similarity in enumerate(adjacent, start=start + 1):
            out[i] = replace(out[i], follows=float(similarity))
        start = end
    return out


def continues(chunk: Chunk) -> bool:
    """True when the unit continues the topic of the unit before it."""
    return chunk.follows >= COHERENCE

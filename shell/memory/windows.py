"""The lines a hit cites: its unit, grown into the neighbours that continue its topic.

Recall matches single units (a bullet, a dialogue turn, part of a paragraph), then cites each
with context: the window grows one neighbour at a time while that neighbour's cosine to the unit
it touches, the heading they share left out, reaches `COHERENCE` and the window stays within
`WINDOW_TOKENS`. When both sides qualify, it takes the neighbour that better continues the topic
and answers the query (`QUERY_PULL`). In a dialogue a hit cites the exchange around it; in a list
of unrelated facts it cites the one line. A window never grows into lines another hit already
cites.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from shell.memory.index.chunking import Chunk, heading_text, is_heading

WINDOW_TOKENS = 220
"""A cited window's budget in tiktoken tokens (~240 word pieces): a window never holds more text
than the 256 word pieces the embedder reads, so a bigger window cannot buy recall."""
COHERENCE = 0.30
"""The cosine a neighbour needs to its adjacent unit for the window to take it in, measured on
vectors without their heading's share (`without_headings`). Neighbouring LoCoMo turns: median
0.55, 94% at 0.30 or more. Thirty unrelated facts under a heading ("# 2026-12-01", "## Facts" or
MEMORY.md's own): at most one neighbour pair at 0.30, where 12-28 pairs passed with the heading
left in. LoCoMo hit@5: 0.892 at 0.30, 0.883 at 0.35, 0.895 at 0.25 (where facts under a heading
start to be cited three at a time); 0.893 with headings left in at 0.35."""
QUERY_PULL = 3.0
"""How much a neighbour's match to the query weighs against its cosine to the window's edge when
the window picks a side. On LoCoMo, where an answer often sits a turn or two from the turn that
matched, hit@1/hit@5: 0 (the topic alone) 0.666/0.887, 1 0.688/0.889, 2-3 0.693/0.893,
5 0.693/0.892."""


@dataclass(frozen=True)
class Window:
    """A run of neighbouring units of one file, `first..last` as indexes into the file's units."""

    first: int
    last: int

    def units(self, units: Sequence[Chunk]) -> Sequence[Chunk]:
        return units[self.first : self.last + 1]


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


def grow_window(
    units: Sequence[Chunk],
    adjacent: np.ndarray,
    center: int,
    taken: set[int],
    *,
    match: np.ndarray | None = None,
    budget: int = WINDOW_TOKENS,
    coherence: float = COHERENCE,
) -> Window:
    """The window around `units[center]`, grown as the module docstring says.

    Args:
        units: The file's units in line order.
        adjacent: `adjacent_similarity` of their vectors.
        center: The hit's unit.
        taken: Indexes of units other windows already cite; the window stays out of them.
        match: Each unit's match to the query, to pick a side by; None picks by topic alone.
        budget: Most tokens in the window (the centre unit always counts in full).
        coherence: Least cosine between neighbours for the window to grow.
    """

    def pull(index: int) -> float:
        return QUERY_PULL * float(match[index]) if match is not None else 0.0

    first = last = center
    used = units[center].tokens
    while True:
        options = []
        if last + 1 < len(units) and last + 1 not in taken and adjacent[last] >= coherence:
            options.append((float(adjacent[last]) + pull(last + 1), last + 1))
        if first > 0 and first - 1 not in taken and adjacent[first - 1] >= coherence:
            options.append((float(adjacent[first - 1]) + pull(first - 1), first - 1))
        options = [(s, i) for s, i in options if used + units[i].tokens <= budget]
        if not options:
            return Window(first, last)
        _, index = max(options)
        used += units[index].tokens
        first, last = min(first, index), max(last, index)


UnitScorer = Callable[[Sequence[Chunk], np.ndarray], np.ndarray]
"""Scores every unit of a file from the units and their vectors (one score per unit)."""


@dataclass
class FileView:
    """One file's units in line order, their vectors' adjacency, scores and cited units."""

    units: list[Chunk]
    adjacent: np.ndarray
    scores: np.ndarray
    position: dict[str, int]
    taken: set[int] = field(default_factory=set)
    sections: dict[str, list[int]] = field(default_factory=dict)
    """Heading → the indexes of the units under it, best score first."""


class FileViews:
    """The files one search touches, loaded once each, and the lines its hits already cite.

    Args:
        units_of: Returns a file's units in line order and their vectors
            (`MemoryIndex.file_units`).
        score: Scores a file's units against the query, for the support a hit draws from its
            window and section and for the side its window grows to; None scores every unit 0.
    """

    def __init__(
        self,
        units_of: Callable[[str], tuple[list[Chunk], np.ndarray]],
        score: UnitScorer | None = None,
    ) -> None:
        self._units_of = units_of
        self._score = score
        self._files: dict[str, FileView] = {}

    def view(self, path: str) -> FileView:
        if path not in self._files:
            units, vectors = self._units_of(path)
            scores = self._score(units, vectors) if self._score else np.zeros(len(units))
            position = {unit.id: i for i, unit in enumerate(units)}
            sections: dict[str, list[int]] = {}
            for i in np.argsort(-scores, kind="stable"):
                sections.setdefault(units[i].heading, []).append(int(i))
            adjacent = adjacent_similarity(without_headings(units, vectors))
            view = FileView(units, adjacent, scores, position, set(), sections)
            self._files[path] = view
        return self._files[path]

    def neighbour_support(self, chunk: Chunk) -> float:
        """The mean score of the two best other units in the chunk's topic window (0 when alone).

        The window is grown by topic alone: grown toward the query as well, as `claim` grows it,
        it measured worse (LoCoMo hit@5 0.889 → 0.884)."""
        view = self.view(chunk.path)
        center = view.position.get(chunk.id)
        if center is None:
            return 0.0
        window = grow_window(view.units, view.adjacent, center, set())
        others = sorted(view.scores[i] for i in range(window.first, window.last + 1) if i != center)
        return float(np.mean(others[-2:])) if others else 0.0

    def section_support(self, chunk: Chunk) -> float:
        """The best score of another unit under the chunk's heading (0 when it is alone there):
        a line in a section about the query outranks a lone line that shares a word with it."""
        view = self.view(chunk.path)
        center = view.position.get(chunk.id)
        ranked = view.sections.get(chunk.heading, [])
        best = next((i for i in ranked[:2] if i != center), None)
        return float(view.scores[best]) if best is not None else 0.0

    def claim(self, chunk: Chunk) -> list[Chunk] | None:
        """The units a hit on `chunk` cites, grown around it outside what earlier hits cite;
        None when an earlier hit already cites the chunk. Call `take` to keep the window."""
        view = self.view(chunk.path)
        center = view.position.get(chunk.id)
        if center is None or center in view.taken:
            return None
        window = grow_window(view.units, view.adjacent, center, view.taken, match=view.scores)
        return list(window.units(view.units))

    def take(self, cited: Sequence[Chunk]) -> None:
        """Mark these units (all of one file) as cited."""
        for unit in cited:
            view = self.view(unit.path)
            view.taken.add(view.position[unit.id])

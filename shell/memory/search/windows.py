"""The lines a hit cites: its unit, grown into the neighbours that continue its topic.

Recall matches single units (a bullet, a dialogue turn, part of a paragraph), then cites each
with context: the window grows one neighbour at a time while that neighbour continues the topic
of the unit it touches (`coherence.continues`) and the window stays within `WINDOW_TOKENS`. When
both sides qualify, it takes the neighbour that better continues the topic and answers the query
(`QUERY_PULL`). In a dialogue a hit cites the exchange around it; in a list of unrelated facts it
cites the one line. A window never grows into lines another hit already cites.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from shell.memory.index.chunking import Chunk
from shell.memory.index.coherence import continues

WINDOW_TOKENS = 220
"""A cited window's budget in tiktoken tokens (~240 word pieces): a window never holds more text
than the 256 word pieces the embedder reads, so a bigger window cannot buy recall."""
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


def grow_window(
    units: Sequence[Chunk],
    center: int,
    taken: set[int],
    *,
    match: np.ndarray | None = None,
    budget: int = WINDOW_TOKENS,
) -> Window:
    """The window around `units[center]`, grown as the module docstring says.

    Args:
        units: The file's units in line order, each with its `follows`.
        center: The hit's unit.
        taken: Indexes of units other windows already cite; the window stays out of them.
        match: Each unit's match to the query, to pick a side by; None picks by topic alone.
        budget: Most tokens in the window (the centre unit always counts in full).
    """

    def pull(index: int) -> float:
        return QUERY_PULL * float(match[index]) if match is not None else 0.0

    first = last = center
    used = units[center].tokens
    while True:
        options = []
        if last + 1 < len(units) and last + 1 not in taken and continues(after := units[last + 1]):
            options.append((after.follows + pull(last + 1), last + 1))
        if first > 0 and first - 1 not in taken and continues(units[first]):
            options.append((units[first].follows + pull(first - 1), first - 1))
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
    """One file's units in line order, their scores and the units cited."""

    units: list[Chunk]
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
            view = FileView(units, scores, position, set(), sections)
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
        window = grow_window(view.units, center, set())
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
        window = grow_window(view.units, center, view.taken, match=view.scores)
        return list(window.units(view.units))

    def take(self, cited: Sequence[Chunk]) -> None:
        """Mark these units (all of one file) as cited."""
        for unit in cited:
            view = self.view(unit.path)
            view.taken.add(view.position[unit.id])

"""Cited windows and the support a hit draws from its window and its section (pure functions,
on units chunked from real Markdown and hand-made unit vectors)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from shell.memory.index.chunking import Chunk, chunk_markdown
from shell.memory.index.coherence import (
    COHERENCE,
    adjacent_similarity,
    with_follows,
    without_headings,
)
from shell.memory.search.windows import FileViews, grow_window

NOTE = """\
## Garden
- the tomatoes get water every evening
- the greenhouse door sticks in damp weather
- basil seedlings go out in May

## Car
- the car is due for its MOT in March
"""


def units() -> list[Chunk]:
    return chunk_markdown("MEMORY.md", NOTE)


def vectors(angles: Sequence[float]) -> np.ndarray:
    """Unit vectors in a plane: neighbours' cosines are the cosines of the angle between them."""
    return np.array([[np.cos(a), np.sin(a)] for a in angles], dtype=np.float32)


def facts(angles: Sequence[float]) -> list[Chunk]:
    """The note's four facts (its headings left out), each following the one before it by the
    cosine of the angle between their vectors."""
    chunks = [c for c in units() if not c.text.startswith("#")]
    return with_follows(chunks, vectors(angles))


def test_a_window_grows_through_coherent_neighbours_and_stops_at_a_topic_change() -> None:
    chunks = facts([0.0, 0.2, 0.4, 2.0])  # the last is off topic
    window = grow_window(chunks, 0, set())
    assert (window.first, window.last) == (0, 2)


def test_a_window_stays_within_its_budget_and_out_of_taken_units() -> None:
    chunks = facts([0.0, 0.1, 0.2, 0.3])
    alone = grow_window(chunks, 1, set(), budget=chunks[1].tokens)
    assert (alone.first, alone.last) == (1, 1)
    fenced = grow_window(chunks, 1, {0, 2})
    assert (fenced.first, fenced.last) == (1, 1)


def test_a_window_grows_toward_the_neighbour_that_answers_the_query() -> None:
    chunks = facts([0.0, 0.3, 0.5, 0.7])  # unit 2 is nearer unit 1
    one_more = chunks[1].tokens + max(chunks[0].tokens, chunks[2].tokens)
    by_topic = grow_window(chunks, 1, set(), budget=one_more)
    assert (by_topic.first, by_topic.last) == (1, 2)
    match = np.array([0.8, 0.5, 0.1, 0.0])  # but unit 0 is what the query asks about
    by_query = grow_window(chunks, 1, set(), match=match, budget=one_more)
    assert (by_query.first, by_query.last) == (0, 1)


def test_a_shared_heading_does_not_make_unrelated_facts_coherent() -> None:
    note = (
        "## The garden behind the house, and everything that grows in it\n" + NOTE.split("\n", 1)[1]
    )
    chunks = chunk_markdown("MEMORY.md", note)[:4]  # the long heading and its three facts
    heading, *facts = np.eye(4, dtype=np.float32)  # the facts have nothing in common
    shares = [chunks[0].tokens / (chunks[0].tokens + c.tokens) for c in chunks[1:]]
    rows = [heading] + [
        s * heading + np.sqrt(1 - s * s) * f for s, f in zip(shares, facts, strict=True)
    ]
    vectors = np.array(rows, dtype=np.float32)
    raw = adjacent_similarity(vectors)[1:]  # the two pairs of neighbouring facts
    assert (raw > COHERENCE).all()  # alike through the heading alone
    deflated = adjacent_similarity(without_headings(chunks, vectors))[1:]
    assert np.allclose(deflated, 0.0, atol=1e-6)


def scored_views(scores: dict[str, float]) -> tuple[FileViews, list[Chunk]]:
    """FileViews over the note, each unit scored by the first word of its text it contains."""
    chunks = with_follows(units(), vectors([0.0] * len(units())))

    def score(batch: Sequence[Chunk], _: np.ndarray) -> np.ndarray:
        return np.array([next((v for k, v in scores.items() if k in c.text), 0.0) for c in batch])

    def units_of(path: str) -> tuple[list[Chunk], np.ndarray]:
        return chunks, vectors([0.0] * len(chunks))

    return FileViews(units_of, score), chunks


def test_section_support_is_the_best_other_unit_under_the_same_heading() -> None:
    views, chunks = scored_views({"tomatoes": 0.9, "greenhouse": 0.6, "basil": 0.2, "MOT": 0.7})
    by_word = {w: next(c for c in chunks if w in c.text) for w in ("tomatoes", "basil", "MOT")}
    assert views.section_support(by_word["tomatoes"]) == 0.6  # the best's support: the second
    assert views.section_support(by_word["basil"]) == 0.9
    assert views.section_support(by_word["MOT"]) == 0.0  # alone under its heading


def test_section_support_keeps_the_order_within_a_section() -> None:
    scores = {"tomatoes": 0.9, "greenhouse": 0.6, "basil": 0.2}
    views, chunks = scored_views(scores)
    garden = [c for c in chunks if c.heading == "## Garden"]
    final = [scores[w] + views.section_support(c) for w, c in zip(scores, garden, strict=True)]
    assert final == sorted(final, reverse=True)

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, timezone

import pytest

from shell.memory.ranking import (
    blend,
    citation,
    decay_factor,
    jaccard,
    mmr_order,
    normalise_bm25,
    note_date,
    snippet,
    word_tokens,
)

NOW = datetime(2026, 11, 30, 0, 0, tzinfo=UTC)


def test_bm25_normalisation_maps_into_unit_interval() -> None:
    assert normalise_bm25(1.0) == pytest.approx(0.5)
    assert normalise_bm25(3.0) == pytest.approx(0.75)
    assert normalise_bm25(1e9) < 1.0
    assert normalise_bm25(2.0) < normalise_bm25(4.0)


@pytest.mark.parametrize("raw", [0.0, -2.5, math.nan, math.inf, -math.inf])
def test_bm25_without_evidence_is_zero(raw: float) -> None:
    assert normalise_bm25(raw) == 0.0


def test_blend_weights_and_one_leg_only_chunks() -> None:
    scored = {s.chunk_id: s for s in blend({"a": 0.8, "b": 0.5}, {"b": 0.6, "c": 0.9})}
    assert scored["a"].score == pytest.approx(0.7 * 0.8)
    assert scored["a"].text_score == 0.0
    assert scored["b"].score == pytest.approx(0.7 * 0.5 + 0.3 * 0.6)
    assert scored["c"].score == pytest.approx(0.3 * 0.9)
    assert scored["c"].vector_score == 0.0


def test_blend_sorts_best_first_and_floors_negative_cosine() -> None:
    ranked = blend({"a": 0.2, "b": 0.9, "c": -0.5}, {"c": 0.5})
    assert [s.chunk_id for s in ranked] == ["b", "c", "a"]
    assert ranked[1].score == pytest.approx(0.15)


def test_blend_single_leg_weights() -> None:
    (only,) = blend({}, {"x": 0.6}, vector_weight=0.0, text_weight=1.0)
    assert only.score == pytest.approx(0.6)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("memory/2026-10-31.md", "2026-10-31"),
        ("memory/work/2026-10-31.md", "2026-10-31"),
        ("memory/a/b/2026-10-31-standup.md", "2026-10-31"),
        ("MEMORY.md", None),
        ("memory/projects.md", None),
        ("notes/2026-10-31.md", None),
        ("memory/2026-13-45.md", None),
        ("memory/2026-10-31.txt", None),
    ],
)
def test_note_date(path: str, expected: str | None) -> None:
    day = note_date(path)
    assert (day.isoformat() if day else None) == expected


def test_decay_half_life() -> None:
    assert decay_factor("memory/2026-11-30.md", NOW) == pytest.approx(1.0)
    assert decay_factor("memory/2026-10-31.md", NOW) == pytest.approx(0.5)
    assert decay_factor("memory/2026-10-01.md", NOW) == pytest.approx(0.25)
    assert decay_factor("memory/2026-10-01.md", NOW, half_life_days=60) == pytest.approx(0.5)


def test_decay_uses_utc_midnight_and_never_boosts_the_future() -> None:
    noon_in_tokyo = datetime(2026, 11, 30, 21, 0, tzinfo=timezone(timedelta(hours=9)))
    assert decay_factor("memory/2026-11-30.md", noon_in_tokyo) == pytest.approx(0.5 ** (0.5 / 30))
    assert decay_factor("memory/2027-01-01.md", NOW) == 1.0


@pytest.mark.parametrize("path", ["MEMORY.md", "memory/people.md", "memory/2019/ideas.md"])
def test_evergreen_paths_never_decay(path: str) -> None:
    assert decay_factor(path, NOW + timedelta(days=3650)) == 1.0


def test_word_tokens_and_jaccard() -> None:
    assert word_tokens("Deploy, DEPLOY; café") == frozenset({"deploy", "café"})
    assert jaccard(word_tokens("a b c"), word_tokens("b c d")) == pytest.approx(0.5)
    assert jaccard(frozenset(), frozenset()) == 0.0


def test_mmr_drops_a_near_duplicate() -> None:
    texts = [
        "deploy to production with make release then tag the commit",
        "deploy to production with make release then tag the commit today",
        "the staging database password rotates every month",
    ]
    order = mmr_order([0.9, 0.89, 0.5], [word_tokens(t) for t in texts], limit=3)
    assert order == [0, 2]


def test_mmr_prefers_diversity_over_a_similar_slightly_better_hit() -> None:
    tokens = [
        word_tokens("alpha beta gamma delta epsilon"),
        word_tokens("alpha beta gamma delta zeta eta"),  # Jaccard 4/7 with the first
        word_tokens("one two three four five"),
        word_tokens("unrelated filler words here now"),
    ]
    order = mmr_order([1.0, 0.95, 0.8, 0.0], tokens, limit=2)
    assert order == [0, 2]


def test_mmr_first_pick_is_the_most_relevant_and_prefixes_are_stable() -> None:
    tokens = [word_tokens(f"w{i} w{i + 1} shared") for i in range(12)]
    relevance = [0.3, 0.9, 0.5, 0.7, 0.1, 0.6, 0.8, 0.2, 0.4, 0.65, 0.55, 0.45]
    full = mmr_order(relevance, tokens, limit=12)
    assert full[0] == 1
    for limit in range(1, 12):
        assert mmr_order(relevance, tokens, limit=limit) == full[:limit]


def test_mmr_edge_cases() -> None:
    assert mmr_order([], [], limit=3) == []
    assert mmr_order([0.5], [frozenset()], limit=0) == []
    assert mmr_order([0.5, 0.5], [word_tokens("a"), word_tokens("b")], limit=5) == [0, 1]


def test_snippet_is_capped_at_700_chars_on_a_word_boundary() -> None:
    text = " ".join(["memory"] * 300)
    cut = snippet(text)
    assert len(cut) <= 700
    assert cut.endswith("memory…")
    assert snippet("  short  ") == "short"


def test_citation_format() -> None:
    assert citation("memory/2026-11-30.md", 3, 9) == "memory/2026-11-30.md#L3-L9"

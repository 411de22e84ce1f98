from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta, timezone

import numpy as np
import pytest

from shell.memory.paths import note_date
from shell.memory.search.ranking import (
    blend,
    citation,
    decay_factor,
    jaccard,
    naming_words,
    newer_first,
    normalise_bm25,
    ordering_score,
    ordering_scores,
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


def test_ordering_score_weighs_bm25_against_the_query_best_match() -> None:
    scale = (0.4, 8.0)
    assert ordering_score(0.5, 8.0, scale) == pytest.approx(0.6 * 0.5 + 0.4)
    assert ordering_score(0.5, 4.0, scale) == pytest.approx(0.6 * 0.5 + 0.2)
    assert ordering_score(-0.2, 0.0, scale) == 0.0  # an anti-correlated cosine counts as none
    assert ordering_score(0.5, 3.0, (0.0, 0.0)) == pytest.approx(0.5)  # vector only


@pytest.mark.parametrize("scale", [(0.4, 8.0), (0.4, 0.0), (0.0, 8.0), (1.0, 2.0)])
def test_a_files_units_are_scored_as_each_unit_alone(scale: tuple[float, float]) -> None:
    cosines = np.array([0.5, -0.2, 0.9, 0.3, 0.7], np.float32)
    raw = np.array([8.0, 0.0, math.inf, math.nan, -1.0])
    alone = [ordering_score(float(c), float(r), scale) for c, r in zip(cosines, raw, strict=True)]
    assert ordering_scores(cosines, raw, scale) == pytest.approx(alone)


def test_a_newer_note_restating_a_hit_moves_just_ahead_of_it() -> None:
    days = [date(2026, 9, 1), None, date(2026, 11, 28)]
    words = [
        word_tokens("Dana rotates the wifi password every quarter"),
        word_tokens("the office has a standing desk"),
        word_tokens("Dana rotates the wifi password every quarter now"),
    ]
    assert newer_first(days, words, [None] * 3) == [2, 0, 1]
    # a note outside the time a query names never jumps one inside it
    assert newer_first(days, words, [True, False, False]) == [0, 1, 2]


def test_an_older_restatement_stays_behind() -> None:
    days = [date(2026, 11, 28), date(2026, 9, 1)]
    words = [word_tokens("Dana rotates the wifi password every quarter")] * 2
    assert newer_first(days, words, [None, None]) == [0, 1]


def test_citation_format() -> None:
    assert citation("memory/2026-11-30.md", 3, 9) == "memory/2026-11-30.md#L3-L9"


def test_a_newer_fact_of_the_same_pattern_does_not_restate_the_one_asked_about() -> None:
    days = [date(2026, 9, 1), date(2026, 11, 28)]
    words = [
        word_tokens("the code word for project 17 is garnet17"),
        word_tokens("the code word for project 27 is garnet27"),
    ]
    assert newer_first(days, words, [None] * 2, naming_words("code word for project 17?")) == [
        0,
        1,
    ]
    # asked without the number, the newer one is a restatement as before
    assert newer_first(days, words, [None] * 2, naming_words("what is the code word?")) == [1, 0]

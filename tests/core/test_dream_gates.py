"""The deep phase's gates, each at its boundary, on hit logs planted in a real workspace; and
what is never proposed, however often it is recalled (OpenClaw's reported failures)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shell.dreaming.signals import score, signals
from shell.events import DreamProposed, DreamSweepFinished, Stopped
from shell.memory.hit_log import Recall
from tests.conftest import FIXED_NOW, Clock
from tests.core.dreams import FOUR, TODAY, DreamWorld, days_before, of, stops


def world(tmp_path: Path, clock: Clock, **dreaming: object) -> DreamWorld:
    dream = DreamWorld(tmp_path / "ws", clock, **dreaming)
    dream.note(TODAY, "- Tom takes his coffee black")
    return dream


async def test_a_fact_asked_four_ways_on_its_first_day_is_proposed(
    tmp_path: Path, clock: Clock
) -> None:
    dream = world(tmp_path, clock)
    dream.recalled(f"memory/{TODAY}.md", 1, FOUR, score=0.62)
    events = await dream.sweep()
    (proposed,) = of(events, DreamProposed)
    assert proposed.proposal.text == "Tom takes his coffee black."
    assert (proposed.proposal.recalls, proposed.proposal.queries, proposed.proposal.days) == (
        4,
        4,
        1,
    )
    assert proposed.proposal.score >= 0.75
    assert "4 different questions" in proposed.proposal.reason


@pytest.mark.parametrize(("recalls", "proposed"), [(2, False), (3, True)])
async def test_the_recall_gate(tmp_path: Path, clock: Clock, recalls: int, proposed: bool) -> None:
    dream = world(tmp_path, clock, min_score=0.0, min_queries=1)
    dream.recalled(f"memory/{TODAY}.md", 1, FOUR[:recalls])
    events = await dream.sweep()
    assert bool(of(events, DreamProposed)) is proposed
    if not proposed:
        assert stops(events) == [Stopped("recalls", 1)]


@pytest.mark.parametrize(("queries", "proposed"), [(2, False), (3, True)])
async def test_the_distinct_query_gate(
    tmp_path: Path, clock: Clock, queries: int, proposed: bool
) -> None:
    dream = world(tmp_path, clock, min_score=0.0)
    asked = FOUR[:queries] + [FOUR[0]] * (4 - queries)  # four recalls either way
    dream.recalled(f"memory/{TODAY}.md", 1, asked)
    events = await dream.sweep()
    assert bool(of(events, DreamProposed)) is proposed
    if not proposed:
        assert stops(events) == [Stopped("queries", 1)]


async def test_recalls_as_a_weak_hit_beside_the_answer_do_not_count(
    tmp_path: Path, clock: Clock
) -> None:
    dream = world(tmp_path, clock, min_score=0.0)
    dream.recalled(f"memory/{TODAY}.md", 1, FOUR, score=0.55, beside=0.8)  # 0.69 of the best
    assert Stopped("recalls", 1) in stops(await dream.sweep())
    again = world(tmp_path / "again", clock, min_score=0.0)
    again.recalled(f"memory/{TODAY}.md", 1, FOUR, score=0.7, beside=0.8)  # 0.875 of the best
    assert of(await again.sweep(), DreamProposed)


async def test_a_wording_that_differs_only_in_case_and_spaces_is_the_same_query(
    tmp_path: Path, clock: Clock
) -> None:
    dream = world(tmp_path, clock, min_score=0.0)
    dream.recalled(f"memory/{TODAY}.md", 1, ["Tom coffee?", "  tom   COFFEE? ", FOUR[1]])
    assert stops(await dream.sweep()) == [Stopped("queries", 1)]


async def test_the_score_gate(tmp_path: Path, clock: Clock) -> None:
    def planted(name: str, min_score: float) -> DreamWorld:
        dream = world(tmp_path / name, clock, min_score=min_score)
        dream.recalled(f"memory/{TODAY}.md", 1, FOUR, score=0.5)
        return dream

    (measured,) = of(await planted("measure", 0.0).sweep(), DreamProposed)
    total = measured.proposal.score
    assert 0.0 < total < 1.0
    assert stops(await planted("over", total + 0.001).sweep()) == [Stopped("score", 1)]
    assert of(await planted("under", total - 0.001).sweep(), DreamProposed)


@pytest.mark.parametrize(("age", "proposed"), [(30, True), (31, False)])
@pytest.mark.parametrize("asked", ["when written", "today"])
async def test_the_age_gate(
    tmp_path: Path, clock: Clock, age: int, proposed: bool, asked: str
) -> None:
    """The note's age is gated, not only its recalls': a fact from a note older than
    max_age_days is not proposed however recently it was asked about (a later note may have
    overtaken it), and recalls older than that count for nothing."""
    dream = DreamWorld(tmp_path / "ws", clock, min_score=0.0)
    (day,) = days_before(clock, age)
    path = dream.note(day, "- Tom takes his coffee black")
    dream.recalled(path, 1, FOUR[:3], days=[day] if asked == "when written" else None)
    events = await dream.sweep()
    assert bool(of(events, DreamProposed)) is proposed
    if not proposed:
        assert stops(events) == [Stopped("too_old", 1)]


async def test_at_most_limit_proposals_a_sweep(tmp_path: Path, clock: Clock) -> None:
    dream = DreamWorld(tmp_path / "ws", clock, min_score=0.0, limit=2)
    path = dream.note(TODAY, *(f"- Project {name} ships on Friday" for name in "ABC"))
    for line in (1, 2, 3):
        dream.recalled(path, line, [f"when does project {line}?", f"project {line} date", "x"])
    events = await dream.sweep()
    assert len(of(events, DreamProposed)) == 2
    assert Stopped("limit", 1) in stops(events)


async def test_a_fact_recalled_once_is_stopped_by_the_gates(tmp_path: Path, clock: Clock) -> None:
    dream = world(tmp_path, clock)
    dream.recalled(f"memory/{TODAY}.md", 1, FOUR[:1], score=0.95)
    assert stops(await dream.sweep()) == [Stopped("recalls", 1)]


def test_a_first_day_fact_passes_openclaws_weights_with_the_phase_boosts() -> None:
    """Why OpenClaw's weights stay (bench/README.md has the measured table)."""

    def first_day(questions: int, boosted: bool) -> float:
        recalls = [Recall(f"{TODAY}T09:00:00+01:00", q, 0.62, 0.62) for q in FOUR[:questions]]
        found = signals(
            recalls,
            FIXED_NOW,
            text="Tom takes his coffee black",
            half_life_days=14,
            light_hits=questions if boosted else 0,
            rem_hits=1 if boosted else 0,
        )
        assert found.consolidation == 0.0  # one day: a tenth of the weight is out of reach
        return score(found)

    assert first_day(4, boosted=True) >= 0.75 > first_day(4, boosted=False)
    assert first_day(3, boosted=True) < 0.75  # three questions on a first day are not enough


JUNK = [
    ("- hi, how are you today?", "small_talk"),
    ("- thanks, sounds good", "small_talk"),
    ("- what time is the standup?", "question"),
    ("- git push --force origin main", "command"),
    ("- $ kubectl rollout restart deploy/api", "command"),
    ("- tell me a joke about deploys", "command"),
    ("## Infra", "heading"),
    ("- deploy notes [score=0.82 recalls=5]", "metadata"),
    ("- <!-- openclaw-memory-promotion:memory/x.md:3:4 -->", "metadata"),
    ("- the staging token is [REDACTED github token]", "redacted"),
    ("- [cairn:memory-flush] Pre-compaction memory flush. Store the durable facts", "control"),
    ("- [Startup context: recent daily notes] memory/2026-11-29.md", "control"),
    ("- Light sleep · 2026-11-29 to 2026-11-30: 2 notes, 14 facts", "dreaming"),
]


@pytest.mark.parametrize(("line", "kind"), JUNK)
async def test_junk_is_never_proposed_however_often_recalled(
    tmp_path: Path, clock: Clock, line: str, kind: str
) -> None:
    dream = DreamWorld(tmp_path / "ws", clock, min_score=0.0)
    path = dream.note(TODAY, line)
    dream.recalled(path, 1, FOUR * 3, days=days_before(clock, 0, 1, 2), score=0.9)
    events = await dream.sweep()
    assert not of(events, DreamProposed)
    assert stops(events) == [Stopped("junk", 1, kind)]  # type: ignore[arg-type]


@pytest.mark.parametrize("state_lost", [False, True])
async def test_a_diary_sentence_of_an_earlier_sweep_in_a_note_is_not_proposed(
    tmp_path: Path, clock: Clock, state_lost: bool
) -> None:
    """Dreaming's own words come back as a note (#79699): never proposed, also when its state
    in .cairn/dreams was deleted (DREAMS.md itself says what dreaming wrote)."""
    dream = world(tmp_path, clock)
    dream.recalled(f"memory/{TODAY}.md", 1, FOUR, score=0.62)
    (finished,) = of(await dream.sweep(), DreamSweepFinished)
    sentence = finished.diary.split(". ")[0] + "."  # "Read 1 note from the last days and …"
    if state_lost:
        (dream.root / ".cairn" / "dreams" / "proposals.json").unlink()
    path = dream.note(TODAY, f"- {sentence}")
    dream.recalled(path, 2, FOUR, score=0.9)
    assert Stopped("junk", 1, "dreaming") in stops(await dream.sweep())


async def test_a_recall_of_memory_md_itself_is_not_a_candidate(
    tmp_path: Path, clock: Clock
) -> None:
    dream = DreamWorld(tmp_path / "ws", clock, min_score=0.0)
    dream.memory("- Tom takes his coffee black")
    dream.recalled("MEMORY.md", 3, FOUR)
    assert stops(await dream.sweep()) == [Stopped("not_a_note", 1)]


async def test_a_unit_edited_away_since_its_recalls_is_gone(tmp_path: Path, clock: Clock) -> None:
    dream = world(tmp_path, clock, min_score=0.0)
    dream.recalled(f"memory/{TODAY}.md", 1, FOUR)
    note = dream.root / "memory" / f"{TODAY}.md"
    note.write_text("- Tom takes his coffee with oat milk\n", encoding="utf-8")
    assert stops(await dream.sweep()) == [Stopped("gone", 1)]


async def test_a_fact_memory_md_holds_is_known(tmp_path: Path, clock: Clock) -> None:
    dream = world(tmp_path, clock, min_score=0.0)
    dream.memory("- Tom takes his coffee black.")
    dream.recalled(f"memory/{TODAY}.md", 1, FOUR)
    assert Stopped("known", 1) in stops(await dream.sweep())


async def test_a_full_queue_holds_new_candidates_back_and_never_expires_open_ones(
    tmp_path: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past MAX_OPEN the oldest (best-scored) open proposals were marked stale and came back
    every sweep without being shown; now a sweep proposes only what the queue has room for,
    the count is the list, and what waited is proposed once room is made."""
    monkeypatch.setattr("shell.dreaming.dreamer.MAX_OPEN", 2)
    dream = DreamWorld(tmp_path / "ws", clock, min_score=0.0)
    path = dream.note(TODAY, *(f"- Project {name} ships on Friday" for name in "ABC"))
    for line in (1, 2, 3):
        dream.recalled(path, line, [f"when does project {line}?", f"project {line} date", "x"])
    first = of(await dream.sweep(), DreamProposed)
    assert len(first) == 2
    assert len(dream.dreamer.open_proposals(window=8192)) == dream.dreamer.waiting() == 2
    again = await dream.sweep()
    assert not of(again, DreamProposed) and Stopped("limit", 1) in stops(again)
    assert {p.proposal.id for p in dream.dreamer.open_proposals(window=8192)} == {
        p.proposal.id for p in first
    }
    dream.dreamer.reject(first[0].proposal.id)
    (waited,) = of(await dream.sweep(), DreamProposed)
    assert waited.proposal.id not in {p.proposal.id for p in first}


async def test_a_paraphrase_of_a_memory_line_is_known_by_content_not_by_its_heading(
    tmp_path: Path, clock: Clock
) -> None:
    """MEMORY.md's vectors carried the heading above each line, so a paraphrase of a known
    fact scored under the bar against it and was proposed again; the bare statements match."""
    dream = DreamWorld(tmp_path / "ws", clock, min_score=0.0, embedder="minilm")
    dream.memory(
        "## Things about the people on the team and their little habits at the office",
        "- Tom takes his coffee black",
    )
    path = dream.note(TODAY, "- Tom: I drink my coffee black")
    dream.recalled(path, 1, FOUR)
    events = await dream.sweep()
    assert not of(events, DreamProposed)
    assert stops(events) == [Stopped("known", 1)]
    assert (dream.root / ".cairn" / "dreams" / "vectors.npz").exists()

"""Updates that need real evidence (`shell.dreaming.changes`, `updates`): the same subject and a
changed value, never a cue word with a shared name. The pairs are the shapes real conversations
gave (issue 35): a move caught without a cue, facts still true beside "started", "now", "new"."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from shell.dreaming.changes import change
from shell.dreaming.wording import anchored
from shell.events import DreamProposed, Stopped
from shell.memory.index.embed import load_embedder
from tests.conftest import Clock
from tests.core.dreams import FOUR, TODAY, DreamWorld, days_before, of, stops


@pytest.fixture(scope="module")
def related(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, str], float]:
    embedder = load_embedder("minilm", tmp_path_factory.mktemp("models"))

    def cosine(a: str, b: str) -> float:
        pair = np.asarray(embedder.embed([a, b]))
        return float(pair[0] @ pair[1])

    return cosine


@pytest.mark.parametrize(
    ("old", "new", "current"),
    [
        ("Kari lives in Oslo", "Kari moved from Oslo to Bergen in March", "Kari lives in Bergen"),
        ("Marta works at Acme", "Marta now works at Globex", "Marta now works at Globex"),
        ("Ben drives a Volvo", "Ben sold his Volvo", "Ben sold his Volvo"),
        ("Sam plays guitar in a band", "Sam quit the band", "Sam quit the band"),
        ("Lena is vegetarian", "Lena is vegan now", "Lena is vegan now"),
        (
            "Our deploy window is Friday 14:00",
            "Our deploy window moved to Thursday 10:00",
            "Our deploy window moved to Thursday 10:00",
        ),
        ("Tom takes his coffee black", "Tom switched to oat lattes", "Tom switched to oat lattes"),
        ("My parents live in Oslo", "My parents moved to Bergen", "My parents moved to Bergen"),
        (
            "Anders works at Telenor",
            "Anders now works at Equinor as a data engineer",
            "Anders now works at Equinor as a data engineer",
        ),
        (
            "Pia rents a flat in Grünerløkka",
            "Pia bought a house in Asker",
            "Pia bought a house in Asker",
        ),
        (
            "Our team channel is #platform-core",
            "The #platform-core channel was renamed to #infra",
            "The #platform-core channel was renamed to #infra",
        ),
    ],
)
def test_a_changed_value_is_a_change(
    related: Callable[[str, str], float], old: str, new: str, current: str
) -> None:
    found = change(old, new, related)
    assert found is not None
    assert found.current == current


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Caroline works as a counselor", "Caroline started a painting class"),
        ("Tom takes his coffee black", "Tom started a new job at Acme"),
        ("Priya leads the billing team", "Priya now works remotely on Fridays"),
        ("Melanie has two kids", "Melanie's kids started school this week"),
        ("John is a teacher", "John started volunteering since January"),
        ("Joanna writes screenplays", "Joanna's new screenplay got rejected"),
        ("Tom has a dog named Rex", "Tom now has a cat too"),
        ("Tom takes his coffee black", "Tom takes his coffee black now"),
        ("Kari lives in Oslo", "Ingrid moved from Oslo to Bergen"),
        ("Kari lives in Oslo", "Kari went on holiday in Rome"),
        ("John is a huge fan of Lord of the Rings", "John is a total movie fan"),
        ("John is a huge fan of Lord of the Rings", "John's favorite character is Aragorn"),
        (
            "Melanie and others were all freaked when their son got into an accident",
            "They were scared but Melanie and others reassured them",
        ),
    ],
)
def test_a_cue_word_and_a_shared_name_are_no_change(
    related: Callable[[str, str], float], old: str, new: str
) -> None:
    assert change(old, new, related) is None


async def test_a_move_is_proposed_as_the_current_fact(tmp_path: Path, clock: Clock) -> None:
    dream = DreamWorld(tmp_path / "ws", clock, embedder="minilm")
    last_week, yesterday = days_before(clock, 7, 1)
    dream.memory("- Kari lives in Oslo", "- Caroline works as a counselor", day=last_week)
    dream.note(yesterday, "- Kari moved from Oslo to Bergen in March")
    dream.note(yesterday, "- Caroline: I started a painting class last week!")
    (proposed,) = of(await dream.sweep(), DreamProposed)
    update = proposed.proposal
    assert (update.kind, update.text) == ("update", "Kari lives in Bergen.")
    assert update.replaces == "- Kari lives in Oslo"
    assert "“from Oslo to Bergen”" in update.reason


async def test_a_fact_a_later_note_changed_is_never_proposed_as_an_add(
    tmp_path: Path, clock: Clock
) -> None:
    dream = DreamWorld(tmp_path / "ws", clock, min_score=0.0)
    (last_week,) = days_before(clock, 7)
    old = dream.note(last_week, "- Andrew: I work at Acme as a tester")
    dream.note(TODAY, "- Andrew: I quit Acme, I start at Globex on Monday")
    dream.recalled(old, 1, FOUR, days=[last_week])
    events = await dream.sweep()
    assert not [e for e in of(events, DreamProposed) if "Acme as a tester" in e.proposal.text]
    assert Stopped("overtaken", 1) in stops(events)


def test_relative_times_become_the_notes_dates() -> None:
    day = date(2026, 12, 6)
    assert anchored("Sam quit the band last month", day) == "Sam quit the band in November 2026"
    assert anchored("Dave got a job yesterday", day) == "Dave got a job on 5 December 2026"
    assert anchored("Ana moved to Bergen", day) == "Ana moved to Bergen"

"""A chat line as the fact it states (`shell.dreaming.facts`), and the junk filters that judge
a line by it. The lines are the shapes real conversations gave dreaming (LoCoMo, issue 35):
reactions carrying a name, a speaker prefix, emoji, quotes, Norwegian small talk."""

from __future__ import annotations

import pytest

from shell.dreaming.distill import Draft, by_rule
from shell.dreaming.facts import fact_of
from shell.dreaming.junk import junk_kind
from shell.dreaming.wording import third_person


@pytest.mark.parametrize(
    ("line", "fact"),
    [
        (
            "Dave: Wow, Calvin! That's amazing news! Congratulations… I just got a job at Acme.",
            "Dave just got a job at Acme.",
        ),
        (
            "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
            "Caroline went to a LGBTQ support group yesterday and it was so powerful.",
        ),
        ("Dave: I love my dog Max. His name means greatest.", None),
        (
            "Gina: I lost my job as a banker yesterday.",
            "Gina lost their job as a banker yesterday.",
        ),
        ("Priya: our deploy window is Friday 14:00", "Priya's deploy window is Friday 14:00."),
        ("Tom: i really like hiking in the Alps 🏔️ :)", "Tom really likes hiking in the Alps."),
        (
            'Melanie: "My sister moved to Tromsø in March." [shares a photo: a harbour]',
            "Melanie's sister moved to Tromsø in March.",
        ),
        (
            "Maria: Wow, John! I'm doing my part too, volunteering at a homeless shelter.",
            "Maria is doing their part too, volunteering at a homeless shelter.",
        ),
        ("Tom: I've been working at Acme since May", "Tom has been working at Acme since May."),
        (
            "Ana: Thanks, Jo! I'm so excited. It's always been a dream to open a bakery. Tips?",
            "It has been Ana's dream to open a bakery.",
        ),
        ("Priya leads billing", "Priya leads billing"),
        ("Deadline: the report is due Friday", "Deadline: the report is due Friday"),
    ],
)
def test_a_chat_line_becomes_the_one_fact_it_states(line: str, fact: str | None) -> None:
    found = fact_of(line)
    if fact is None:  # the pronoun sentence goes with the one it continues, never alone
        assert found == "Dave loves their dog Max. His name means greatest."
    else:
        assert found == fact


@pytest.mark.parametrize(
    "line",
    [
        "Audrey: Wow, that's amazing!",
        "Caroline: Thanks, Mel! You're so sweet 😊",
        "Dave: That's awesome, Calvin! Congrats!",
        "Jon: You did great, keep it up!",
        "Nate: What kind of games do you like?",
        "Kari: Hei! Takk for sist.",
        "Assistant: I found three notes about that.",
        "That's so cool, Priya!",
        "Andrew: No, no pets right now.",
        "Ana: It's been a long week, Jo.",
    ],
)
def test_reactions_greetings_questions_and_the_assistant_state_no_fact(line: str) -> None:
    assert fact_of(line) is None
    assert junk_kind(f"- {line}") is not None


def test_a_speaker_prefix_no_longer_carries_a_reaction_past_the_filters() -> None:
    """`junk_kind("- Audrey: Wow, that's amazing!")` was None: the name made it a fact."""
    assert junk_kind("- Audrey: Wow, that's amazing!") == "small_talk"
    assert junk_kind("- Nate: Have you seen the new Zelda?") == "question"
    assert junk_kind("- Dave: Wow! I just got a job at Acme.") is None


def test_a_norwegian_fact_is_kept_and_its_small_talk_is_not() -> None:
    assert junk_kind("- Kari: Hei! Takk for sist. Søsteren min bor i Tromsø.") is None
    assert fact_of("Kari: Hei! Takk for sist. Søsteren min bor i Tromsø.") == (
        "Søsteren min bor i Tromsø."
    )
    assert junk_kind("- Hei, tusen takk!") == "small_talk"


def test_the_proposal_by_rule_is_the_fact_not_the_chat_line() -> None:
    draft = Draft("c0", "add", "- Dave: Wow, Calvin! I just adopted a puppy named Max!", [])
    assert by_rule(draft) == "Dave just adopted a puppy named Max."


@pytest.mark.parametrize(
    ("said", "written"),
    [
        ("I'm a nurse", "Ana is a nurse"),
        ("I've lived in Oslo since 2019", "Ana has lived in Oslo since 2019"),
        ("I go to the gym every Monday", "Ana goes to the gym every Monday"),
        ("I finally tried pottery", "Ana finally tried pottery"),
        ("I watch films with my brother", "Ana watches films with their brother"),
        ("We adopted a cat", "Ana and others adopted a cat"),
        ("My dad taught me chess", "Ana's dad taught them chess"),
    ],
)
def test_the_third_person(said: str, written: str) -> None:
    assert third_person(said, "Ana") == written

"""`bench.dream --real` on a tiny conversation in LoCoMo's format: four facts, each asked about by
four questions, labelled durable, borderline, junk and not at all, and a question asked about as
often in a note older than the age window; the counts it reports are the ones that input gives
(`bench.dream_real` runs it on LoCoMo)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.dream_real import Labelled, run, shifted
from bench.dream_real_report import report
from bench.dream_setup import NOW
from bench.locomo_data import load
from shell.memory.paths import note_date

FACTS = {
    "D1:2": (
        "Ben",
        "Do you still play chess with your grandfather every Sunday morning?",
        (
            "Does Ana play chess with her grandfather?",
            "Who does Ana play chess with?",
            "When does Ana play chess?",
            "Does Ana still play chess on Sunday mornings?",
        ),
    ),
    "D2:1": (
        "Ana",
        "I adopted a grey kitten named Pixel from the animal shelter.",
        (
            "What is the name of Ana's kitten?",
            "Where did Ana get her cat Pixel?",
            "What colour is Ana's kitten?",
            "Does Ana have a pet?",
        ),
    ),
    "D2:3": (
        "Ben",
        "My sister Clara lives in Lisbon and works as a marine biologist.",
        (
            "Where does Ben's sister Clara live?",
            "What is Clara's job?",
            "Who is the marine biologist in Ben's family?",
            "Does Ben have a sister in Lisbon?",
        ),
    ),
    "D3:1": (
        "Ben",
        "I play the cello in the city orchestra every Thursday evening.",
        (
            "What instrument does Ben play?",
            "When does Ben play in the orchestra?",
            "Does Ben play the cello?",
            "Which orchestra is Ben in?",
        ),
    ),
    "D3:2": (
        "Ana",
        "My favourite food is spicy ramen from the night market downtown.",
        (
            "What is Ana's favourite food?",
            "Where does Ana buy ramen?",
            "Does Ana like spicy food?",
            "What does Ana eat at the night market?",
        ),
    ),
}
SMALL_TALK = {
    "D1:1": ("Ben", "Hi Ana! How have you been?"),
    "D2:2": ("Ben", "Aww, that's so sweet!"),
    "D2:4": ("Ana", "That sounds lovely!"),
    "D3:3": ("Ben", "See you soon, take care!"),
}
SESSIONS = {
    1: "10:00 am on 1 February, 2024",  # 61 days before the last: outside the 30-day window
    2: "3:00 pm on 20 March, 2024",
    3: "6:30 pm on 2 April, 2024",
}
LABELS = {
    "D1:1": "junk",
    "D1:2": "junk",  # a question: never proposed, but recalled as often as the facts
    "D2:1": "borderline",
    "D2:2": "junk",
    "D2:3": "durable",
    "D2:4": "junk",
    "D3:1": "junk",  # a plain fact, labelled junk: the label decides, not the text
    "D3:3": "junk",
}  # D3:2 is left unlabelled


def _conversation() -> dict[str, Any]:
    turns = {dia: (speaker, text) for dia, (speaker, text, _) in FACTS.items()} | SMALL_TALK
    conversation: dict[str, Any] = {"speaker_a": "Ana", "speaker_b": "Ben"}
    for number, when in SESSIONS.items():
        conversation[f"session_{number}_date_time"] = when
        conversation[f"session_{number}"] = [
            {"speaker": speaker, "dia_id": dia, "text": text}
            for dia, (speaker, text) in sorted(turns.items())
            if dia.startswith(f"D{number}:")
        ]
    conversation["qa"] = [
        {"question": question, "answer": "-", "evidence": [dia], "category": 1 + index % 4}
        for dia, (_, _, questions) in FACTS.items()
        for index, question in enumerate(questions)
    ] + [{"question": "What did Ana say about the weather?", "answer": "-", "category": 5}]
    return conversation


def test_the_notes_keep_their_spacing_and_end_today(tmp_path: Path) -> None:
    data = tmp_path / "91.json"
    data.write_text(json.dumps(_conversation()), encoding="utf-8")
    (conversation,) = load(data)

    moved = shifted(conversation)

    days = sorted(day for path in moved.notes if (day := note_date(path)))
    assert days[-1] == NOW.date()
    assert [(days[-1] - day).days for day in days] == [61, 13, 0]
    assert moved.where["D2:3"] == (f"memory/{days[1].isoformat()}.md", 4)  # after the heading
    assert len(conversation.asked) == 20  # category 5 is not asked


def test_a_proposal_takes_the_best_label_of_the_turns_it_cites() -> None:
    labelled = Labelled({("n", 1): "junk", ("n", 2): "durable", ("n", 3): "borderline"})

    assert labelled.of_range("n", 1, 3) == "durable"
    assert labelled.of_range("n", 1, 1) == "junk"
    assert labelled.of_range("n", 3, 4) == "borderline"
    assert labelled.of_range("n", 4, 9) == "unlabelled"
    assert labelled.of_range("m", 2, 2) == "unlabelled"


def test_the_real_mode_counts_what_a_tiny_conversation_gives(tmp_path: Path) -> None:
    data, labels = tmp_path / "91.json", tmp_path / "labels"
    data.write_text(json.dumps(_conversation()), encoding="utf-8")
    labels.mkdir()
    (labels / "91.json").write_text(json.dumps(LABELS), encoding="utf-8")

    result = run(data, labels, updates=False, synthetic=False)

    (found,) = result["conversations"]
    assert (found["questions"], found["turns"], found["labelled"]) == (20, 9, 8)
    assert found["first"] == {
        "proposals": 4,
        "durable": 1,
        "borderline": 1,
        "junk": 1,
        "unlabelled": 1,
    }
    assert (found["rates"]["precision"], found["rates"]["junk_share"]) == (0.25, 0.25)
    assert found["unlabelled_turns"] == ["D3:2"]
    repeated = found["repeated"]
    assert (repeated["sweeps"], repeated["proposals"], repeated["ended"]) == (
        2,
        4,
        "nothing proposed",
    )
    assert (repeated["accepted"], repeated["rejected"], repeated["errors"]) == (1, 3, 0)
    coverage = found["coverage"]  # the chess question's note is out of the age window
    assert coverage["durable"] == {"eligible": 1, "proposed": 1}
    assert coverage["all"] == {"eligible": 4, "proposed": 4}
    assert coverage["all_any_age"] == {"eligible": 5, "proposed": 4}
    assert result["totals"]["tuned"]["first"] == found["first"]
    assert "held out" not in result["totals"]
    assert "| **precision** (durable / all) | 0.25 | 0.25 | ≥ 0.8 |" in report(result)

"""Compaction without a model: the cut, the summary quality check, and the summary by rule."""

from __future__ import annotations

from typing import Any

import pytest

from shell.lifecycle.compaction import find_cut, summary_by_rule
from shell.lifecycle.summary_check import quality_problems
from shell.messages import summary_message
from shell.text.identifiers import extract_identifiers
from tests.core.compaction_helpers import (
    ASK,
    COUNTER,
    FILLER,
    IDENTIFIERS,
    RECENT,
    assistant,
    call,
    conversation,
    good_summary,
    result,
    user,
)


def pairs_intact(messages: list[dict[str, Any]], cut: int) -> bool:
    kept_calls = {c["id"] for m in messages[cut:] for c in m.get("tool_calls") or ()}
    return all(m["tool_call_id"] in kept_calls for m in messages[cut:] if m["role"] == "tool")


# --- find_cut --------------------------------------------------------------------------------


def test_cut_lands_on_a_turn_start_and_keeps_about_the_tail() -> None:
    messages = conversation(8)
    turn = COUNTER.messages(messages[:4])
    keep = turn * 2 + 10
    cut = find_cut(messages, COUNTER, keep)
    assert messages[cut]["role"] == "user"
    assert cut == 4 * 6  # two whole turns and a bit: the partial third turn is summarised
    assert COUNTER.messages(messages[cut:]) <= keep
    assert COUNTER.messages(messages[cut - 4 :]) > keep


def test_cut_is_never_inside_a_tool_pair_at_any_tail_size() -> None:
    messages = conversation(6)
    total = COUNTER.messages(messages)
    seen_cuts = set()
    for keep in range(1, total + 50, 7):
        cut = find_cut(messages, COUNTER, keep)
        seen_cuts.add(cut)
        if cut:
            assert messages[cut]["role"] != "tool"
            assert pairs_intact(messages, cut), (keep, cut)
    assert len(seen_cuts) > 4  # the sweep really moved the cut around


def test_short_history_has_nothing_to_compact() -> None:
    messages = conversation(2)
    assert find_cut(messages, COUNTER, COUNTER.messages(messages)) == 0
    assert find_cut(messages, COUNTER, 100_000) == 0
    assert find_cut([], COUNTER, 10) == 0


def test_one_huge_turn_is_cut_inside_at_an_assistant_message() -> None:
    huge = "log line with details " * 400
    messages = [
        *conversation(1),
        user("Please investigate the outage"),
        call("a"),
        result("a", huge),
        call("b"),
        result("b", huge),
        call("c"),
        result("c", huge),
        assistant("Found it."),
    ]
    keep = COUNTER.message(result("a", huge)) + 50
    cut = find_cut(messages, COUNTER, keep)
    assert cut > 5  # inside the last turn, after its user message
    assert messages[cut]["role"] == "assistant"
    assert pairs_intact(messages, cut)
    assert COUNTER.messages(messages[cut:]) <= keep + COUNTER.message(messages[cut])


def test_a_leading_summary_is_always_merged_never_kept() -> None:
    messages = [summary_message("## Decisions\n- old"), *conversation(3)]
    for keep in range(1, COUNTER.messages(messages), 11):
        cut = find_cut(messages, COUNTER, keep)
        assert cut == 0 or cut >= 2
    # With only the summary before the tail there is nothing new to summarise.
    short = [summary_message("## Decisions\n- old"), user(FILLER * 3), assistant("ok")]
    assert find_cut(short, COUNTER, COUNTER.messages(short[1:])) == 0


# --- quality check ---------------------------------------------------------------------------


def test_identifiers_come_from_the_recent_messages() -> None:
    assert {
        "E4012",
        "db.internal:5432",
        "OPS-4471",
        "memory/2026-03-01.md",
        "9f3ab21c",
        "14:30",
        "/var/log/deploy.log",
        "https://status.example.com/incidents/7",
    } <= set(IDENTIFIERS)
    many = extract_identifiers(" ".join(f"TK-{n}" for n in range(100, 140)))
    assert many == [f"TK-{n}" for n in range(128, 140)]  # the 12 most recent


@pytest.mark.parametrize(
    ("summary", "expected"),
    [
        pytest.param(good_summary(), [], id="good"),
        pytest.param(
            good_summary().replace("## Open TODOs", "## Todo"),
            ["## Open TODOs"],
            id="missing-heading",
        ),
        pytest.param(good_summary(IDENTIFIERS[1:]), [IDENTIFIERS[0]], id="missing-identifier"),
        pytest.param(good_summary(ask="- none"), ["latest user ask"], id="ask-not-reflected"),
        pytest.param(
            good_summary(ask="Schedule the migration rollback (Friday)."), [], id="ask-paraphrased"
        ),
        pytest.param("", ["empty"], id="empty"),
        pytest.param(
            "Summary unavailable due to context limits.", ["unavailable"], id="unavailable"
        ),
    ],
)
def test_quality_problems(summary: str, expected: list[str]) -> None:
    problems = quality_problems(summary, RECENT, ASK)
    assert len(problems) == len(expected)
    for problem, fragment in zip(problems, expected, strict=True):
        assert fragment in problem


# --- summary by rule -------------------------------------------------------------------------


def test_a_summary_by_rule_over_parts_keeps_the_latest_ask_of_an_earlier_part() -> None:
    """Seen with SmolLM2: one rambling reply filled a part of its own, and the summary of that
    part lost the user's message the part before ended with."""
    ask = "Hi, I'm Ana. My sister lives in Tromsø."
    parts = [[user(ask)], [assistant("Sıralaşı Anadolu Tromsøkale, 15.12.2024 " * 40)]]
    summary = summary_by_rule(parts, None, None)
    assert quality_problems(summary, parts[-1], ask) == []

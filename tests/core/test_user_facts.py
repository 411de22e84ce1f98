"""Which sentences the demo brain keeps: the classifier alone, then a user turn and a flush."""

from __future__ import annotations

import json
from typing import Any

import pytest

from shell import prompts
from shell.demo.rules import decide
from shell.text.user_facts import durable_facts, is_statement_of_fact, stated_facts, without_opener

FACTS = [
    "Our release train leaves every second Tuesday.",
    "The database password rotation happens on the 1st of each month.",
    "My sister lives in Tromsø.",
    "The API gateway runs on Envoy.",
    "Backups go to the s3 bucket cairn-backups-eu.",
    "I drink green tea every morning.",
    "The design review for project Heron is on 9 December.",
    "I'm learning Rust this winter.",
    "Priya leads the billing team in Lisbon.",
    "We picked Grafana for the new dashboards.",
    "the coffee machine is broken again",
    "Our wifi password changes monthly.",
    "I have two cats at home.",
    "No, the deploy is on Friday.",
    "FYI: ticket PROJ-4101 tracks the login bug.",
]
NOT_FACTS = [
    "hi",
    "Hi!",
    "hello there",
    "thanks",
    "thank you so much for that",
    "ok",
    "ok cool",
    "sounds good",
    "sounds good to me",
    "that's great",
    "that's really great to hear",
    "lol",
    "haha that is so funny",
    "how are you",
    "I am fine, thank you",
    "I'm really glad to hear that",
    "I see what you mean",
    "you are very helpful today",
    "That is great, Cairn, thank you",
    "Awesome, thanks!",
    "can you help me?",
    "tell me a joke",
    "let me think about it",
    "let's talk about shells",
    "Where does my sister live?",
    "When does the release train leave",
    "What time is it in Tokyo?",
    "Do you know any good books?",
]


@pytest.mark.parametrize("sentence", FACTS)
def test_a_plain_statement_of_fact_is_one(sentence: str) -> None:
    assert is_statement_of_fact(sentence)


@pytest.mark.parametrize("sentence", NOT_FACTS)
def test_small_talk_requests_and_questions_are_not(sentence: str) -> None:
    assert not is_statement_of_fact(sentence)


@pytest.mark.parametrize(
    ("sentence", "core"),
    [
        ("ok, btw our CI runs nightly", "our CI runs nightly"),
        ("FYI: ticket PROJ-4101 tracks the login bug.", "ticket PROJ-4101 tracks the login bug."),
        ("Thanks, I'll be in Oslo next week.", "I'll be in Oslo next week."),
        ("Good news: the build is green", "the build is green"),
        ("No one has the key", "No one has the key"),
        ("Andrew lives in Oslo", "Andrew lives in Oslo"),
    ],
)
def test_only_leading_interjections_are_dropped(sentence: str, core: str) -> None:
    assert without_opener(sentence) == core


def test_each_sentence_of_a_message_is_judged_on_its_own() -> None:
    message = "Hi! My sister lives in Tromsø. Thanks a lot. ok, and I prefer tabs over spaces."

    assert stated_facts(message) == ["My sister lives in Tromsø", "I prefer tabs over spaces"]
    assert durable_facts(message) == stated_facts(message)


# --- in a turn and in the flush ---------------------------------------------------------------

SYSTEM = {"role": "system", "content": "You are Cairn.\n\nCurrent date: 2026-03-03"}
TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    for name in ("memory_search", "memory_get", "memory_append")
]
APPEND_ONLY = TOOLS[2:]


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def appended(call_id: str, text: str) -> list[dict[str, Any]]:
    """The assistant's memory_append call for `text` and the tool's receipt."""
    function = {"name": "memory_append", "arguments": json.dumps({"text": text})}
    call = {"id": call_id, "type": "function", "function": function}
    receipt = {"path": "memory/2026-03-03.md", "appended": 1, "commit": "abcdef1234"}
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": json.dumps(receipt)},
        {"role": "assistant", "content": "Noted — saved to memory/2026-03-03.md."},
    ]


def flush(*conversation: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": prompts.flush_system("memory/2026-03-03.md")},
        *conversation,
        user(prompts.flush_prompt("memory/2026-03-03.md", "2026-03-03T16:00")),
    ]


def calls(reply: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(call.name, call.arguments) for call in reply.tool_calls]


def test_a_title_or_an_initial_does_not_end_a_sentence() -> None:
    message = "Our landlord is Mr. Okafor. The plumber is J. Berg, e.g. for the boiler."
    assert stated_facts(message) == [
        "Our landlord is Mr. Okafor",
        "The plumber is J. Berg, e.g. for the boiler",
    ]


def test_a_plain_fact_is_saved_at_its_turn() -> None:
    reply = decide([SYSTEM, user("Our release train leaves every second Tuesday.")], TOOLS)

    assert calls(reply) == [
        ("memory_append", {"text": "- Our release train leaves every second Tuesday"})
    ]


def test_an_interjection_is_not_saved_with_the_fact() -> None:
    reply = decide([SYSTEM, user("ok, btw the API gateway runs on Envoy")], TOOLS)

    assert calls(reply) == [("memory_append", {"text": "- the API gateway runs on Envoy"})]


@pytest.mark.parametrize("text", ["ok cool", "that's great", "tell me a joke", "lol"])
def test_small_talk_gets_a_chat_reply_and_no_tool(text: str) -> None:
    reply = decide([SYSTEM, user(text)], TOOLS)

    assert reply.tool_calls == () and reply.text and "closest note" not in reply.text


def test_a_fact_told_with_a_question_is_searched_at_the_turn_and_kept_by_the_flush() -> None:
    text = "Backups go to the s3 bucket cairn-backups-eu. Is that the right region?"

    turn = decide([SYSTEM, user(text)], TOOLS)
    flushed = decide(flush(user(text)), APPEND_ONLY)

    assert calls(turn) == [("memory_search", {"query": "Is that the right region?"})]
    assert calls(flushed) == [
        ("memory_append", {"text": "- Backups go to the s3 bucket cairn-backups-eu"})
    ]


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("My sister lives in Tromsø, where does my brother live?", "My sister lives in Tromsø"),
        ("We moved the standup to 9:30, what time is the retro?", "We moved the standup to 9:30"),
        (
            "The staging db is on port 5433 — can you remind me what the prod port is?",
            "The staging db is on port 5433",
        ),
        (
            "our deploy window is Friday 14:00 and when is the review?",
            "our deploy window is Friday 14:00",
        ),
    ],
)
def test_a_fact_told_in_the_same_sentence_as_a_question_is_kept_by_the_flush(
    text: str, kept: str
) -> None:
    flushed = decide(flush(user(text)), APPEND_ONLY)

    assert calls(flushed) == [("memory_append", {"text": f"- {kept}"})]


@pytest.mark.parametrize(
    "text", ["Can you tell me, and be brief, what is the time?", "ok, what did we decide?"]
)
def test_a_question_in_clauses_keeps_nothing(text: str) -> None:
    assert durable_facts(text) == []


def test_the_flush_does_not_save_again_what_the_turn_saved() -> None:
    fact = "The database password rotation happens on the 1st of each month."
    turn = decide([SYSTEM, user(fact)], TOOLS)
    [(_, arguments)] = calls(turn)

    reply = decide(flush(user(fact), *appended("a1", arguments["text"])), APPEND_ONLY)

    assert reply.text == prompts.NO_REPLY and reply.tool_calls == ()


def test_a_flush_before_a_turn_leaves_that_turns_fact_to_the_turn() -> None:
    pending = user("The API gateway runs on Envoy.")

    before_the_turn = decide(flush(pending), APPEND_ONLY)
    the_turn = decide([SYSTEM, pending], TOOLS)

    assert before_the_turn.text == prompts.NO_REPLY and before_the_turn.tool_calls == ()
    assert calls(the_turn) == [("memory_append", {"text": "- The API gateway runs on Envoy"})]


def test_the_flush_keeps_the_plain_facts_no_turn_saved() -> None:
    reply = decide(
        flush(
            user("hi"),
            {"role": "assistant", "content": "Hello."},
            user("My sister lives in Tromsø."),
            {"role": "assistant", "content": "I would save that, but memory_append is not…"},
            user("thanks, sounds good"),
            user("I'm learning Rust this winter."),
            *appended("a1", "- I'm learning Rust this winter"),
        ),
        APPEND_ONLY,
    )

    assert calls(reply) == [("memory_append", {"text": "- My sister lives in Tromsø"})]

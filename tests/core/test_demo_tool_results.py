"""The offline demo brain after tool results, through real litellm: search hits and their
citations, memory reads, append receipts, tool errors, and litellm's own message objects."""

from __future__ import annotations

import json
from typing import Any

from tests.core.demo_helpers import ALL_TOOLS, NO_SEARCH, SYSTEM, ask, called, result, user

QUESTION = "When is our deploy window?"


def after_search(payload: Any) -> list[dict[str, Any]]:
    return [
        SYSTEM,
        user(QUESTION),
        called("c1", "memory_search", {"query": QUESTION}),
        result("c1", payload),
    ]


async def test_a_search_hit_is_answered_with_the_matching_line_and_its_citation(
    litellm: Any,
) -> None:
    hits = {
        "hits": [
            {
                "path": "memory/2026-03-02.md",
                "startLine": 3,
                "endLine": 5,
                "score": 0.81,
                "snippet": "# Notes\n- lunch with Dana\n- our deploy window is Friday 14:00",
                "citation": "memory/2026-03-02.md#L3-L5",
            }
        ],
        "mode": "hybrid",
    }

    answer = await ask(litellm, after_search(hits), ALL_TOOLS)

    assert answer.calls == []
    assert answer.text == (
        "From memory: our deploy window is Friday 14:00\n\nSource: memory/2026-03-02.md#L3-L5"
    )


async def test_no_hits_means_the_brain_says_it_found_nothing(litellm: Any) -> None:
    answer = await ask(litellm, after_search({"hits": [], "mode": "hybrid"}), ALL_TOOLS)

    assert answer.text == "I checked my memory and found nothing about that."
    assert answer.calls == []


def search_payload(*snippets: tuple[str, int], nothing_relevant: bool = False) -> str:
    """What the real memory_search tool returns, built with its own result types."""
    from shell.memory.search.pipeline import SearchHit, SearchResult

    hits = [
        SearchHit(
            path="memory/2026-11-30.md",
            start_line=line,
            end_line=line + snippet.count("\n"),
            score=0.64,
            vector_score=0.67,
            text_score=0.59,
            snippet=snippet,
            citation=f"memory/2026-11-30.md#L{line}-L{line + snippet.count(chr(10))}",
        )
        for snippet, line in snippets
    ]
    result = SearchResult(QUESTION, "hybrid", hits, None, nothing_relevant)
    return json.dumps(result.to_model_json())


async def test_the_real_search_payload_is_answered_from_its_best_line(litellm: Any) -> None:
    payload = search_payload(
        ("- lunch with Dana on Tuesday", 1), ("- standup moved\n- our deploy window is 14:00", 4)
    )

    answer = await ask(litellm, after_search(payload), ALL_TOOLS)

    assert answer.text == (
        "From memory: our deploy window is 14:00\n\nSource: memory/2026-11-30.md#L4-L5"
    )


async def test_a_question_in_a_note_is_not_taken_for_its_answer(litellm: Any) -> None:
    dialogue = "- Dana: when is our deploy window?\n- Me: the deploy window is Friday 14:00"
    payload = search_payload((dialogue, 7))

    answer = await ask(litellm, after_search(payload), ALL_TOOLS)

    assert answer.text.startswith("From memory: Me: the deploy window is Friday 14:00")


async def test_a_real_nothing_relevant_result_means_found_nothing(litellm: Any) -> None:
    payload = search_payload(("- our deploy window moved", 2), nothing_relevant=True)

    answer = await ask(litellm, after_search(payload), ALL_TOOLS)

    assert answer.text == "I checked my memory and found nothing about that."


async def test_memory_get_results_are_answered_with_a_line_citation(litellm: Any) -> None:
    question = "what did we decide about PROJ-1234?"
    messages = [
        SYSTEM,
        user(question),
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "g1",
                    "type": "function",
                    "function": {"name": "memory_get", "arguments": '{"path": "MEMORY.md"}'},
                },
                {
                    "id": "g2",
                    "type": "function",
                    "function": {
                        "name": "memory_get",
                        "arguments": '{"path": "memory/2026-03-03.md"}',
                    },
                },
            ],
        },
        result("g1", {"path": "MEMORY.md", "text": "# Memory\n- prefers tabs", "from": 1}),
        result(
            "g2",
            {
                "path": "memory/2026-03-03.md",
                "text": "# 2026-03-03\n- standup moved\n- decided to ship PROJ-1234 behind a flag",
                "from": 1,
            },
        ),
    ]

    answer = await ask(litellm, messages, NO_SEARCH)

    assert answer.text == (
        "From memory: decided to ship PROJ-1234 behind a flag\n\nSource: memory/2026-03-03.md#L3"
    )


async def test_an_append_result_is_confirmed_with_path_and_short_commit(litellm: Any) -> None:
    messages = [
        SYSTEM,
        user("remember that E4012 means the token expired"),
        called("a1", "memory_append", {"text": "- E4012 means the token expired"}),
        result(
            "a1",
            {
                "path": "memory/2026-03-03.md",
                "appended": 1,
                "skippedDuplicates": 0,
                "commit": "0123456789abcdef0123",
            },
        ),
    ]

    answer = await ask(litellm, messages, ALL_TOOLS)

    assert answer.text == "Noted — saved to memory/2026-03-03.md (commit 0123456)."


async def test_a_duplicate_append_says_nothing_new_was_saved(litellm: Any) -> None:
    messages = [
        SYSTEM,
        user("remember that E4012 means the token expired"),
        called("a1", "memory_append", {"text": "- E4012 means the token expired"}),
        result(
            "a1",
            {"path": "memory/2026-03-03.md", "appended": 0, "skippedDuplicates": 1, "commit": None},
        ),
    ]

    answer = await ask(litellm, messages, ALL_TOOLS)

    assert answer.text == "Already in memory — nothing new to save."


async def test_a_tool_error_is_reported_in_one_line_without_calling_again(litellm: Any) -> None:
    answer = await ask(litellm, after_search("Error: the memory index is being rebuilt"), ALL_TOOLS)

    assert answer.calls == []
    assert answer.text == "memory_search failed: the memory index is being rebuilt."


async def test_a_full_round_trip_with_litellms_own_message_objects(litellm: Any) -> None:
    messages: list[Any] = [SYSTEM, user("remember that the on-call phone is in drawer B7")]
    first = await ask(litellm, messages, ALL_TOOLS)
    messages += [
        first.message,  # the assembled litellm Message, as an agent loop appends it
        result(
            first.call_ids[0],
            {
                "path": "memory/2026-03-03.md",
                "appended": 1,
                "skippedDuplicates": 0,
                "commit": "b7b7b7b7b7",
            },
        ),
    ]

    second = await ask(litellm, messages, ALL_TOOLS)

    assert first.calls == [("memory_append", {"text": "- the on-call phone is in drawer B7"})]
    assert second.text == "Noted — saved to memory/2026-03-03.md (commit b7b7b7b)."

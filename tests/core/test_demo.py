"""The offline demo brain, driven through real litellm as the agent drives it: streamed, with
usage, and reassembled with `litellm.stream_chunk_builder`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import date
from typing import Any

import pytest

from shell import prompts
from shell.config import DEMO_MODEL
from shell.text.tokens import count_tokens

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

SYSTEM = {"role": "system", "content": "You are Cairn.\n\nCurrent date: 2026-03-03"}


def tool(name: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": f"The {name} tool.",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
        },
    }


ALL_TOOLS = [tool("memory_search"), tool("memory_get"), tool("memory_append")]
NO_SEARCH = [tool("memory_get"), tool("memory_append")]


@pytest.fixture
def litellm() -> Iterator[Any]:
    import litellm as module

    from shell.demo.provider import demo_brain

    module.suppress_debug_info = True
    saved = module.custom_provider_map
    module.custom_provider_map = [
        {"provider": "cairn-demo", "custom_handler": demo_brain(today=lambda: date(2030, 1, 2))}
    ]
    yield module
    module.custom_provider_map = saved


class Answer:
    def __init__(self, chunks: list[Any], full: Any) -> None:
        self.chunks = chunks
        self.message = full.choices[0].message
        self.finish_reason = full.choices[0].finish_reason
        self.usage = full.usage
        self.text = self.message.content or ""
        self.calls = [
            (call.function.name, json.loads(call.function.arguments))
            for call in self.message.tool_calls or ()
        ]
        self.call_ids = [call.id for call in self.message.tool_calls or ()]


async def ask(litellm: Any, messages: list[dict[str, Any]], tools: list[Any] | None) -> Answer:
    extra = {"tools": tools} if tools else {}
    stream = await litellm.acompletion(
        model=DEMO_MODEL,
        messages=messages,
        stream=True,
        stream_options={"include_usage": True},
        **extra,
    )
    chunks = [chunk async for chunk in stream]
    return Answer(chunks, litellm.stream_chunk_builder(chunks, messages=messages))


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def called(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


def result(call_id: str, payload: Any) -> dict[str, Any]:
    content = payload if isinstance(payload, str) else json.dumps(payload)
    return {"role": "tool", "tool_call_id": call_id, "content": content}


# --- normal turns -----------------------------------------------------------------------------


async def test_remember_appends_the_cleaned_fact(litellm: Any) -> None:
    answer = await ask(
        litellm, [SYSTEM, user("Remember that our deploy window is Friday 14:00.")], ALL_TOOLS
    )

    assert answer.calls == [("memory_append", {"text": "- our deploy window is Friday 14:00"})]
    assert answer.finish_reason == "tool_calls"


async def test_a_stated_preference_is_appended_too(litellm: Any) -> None:
    answer = await ask(litellm, [SYSTEM, user("Hi! I prefer tabs over spaces.")], ALL_TOOLS)

    assert answer.calls == [("memory_append", {"text": "- I prefer tabs over spaces"})]


async def test_a_question_searches_memory_when_search_is_offered(litellm: Any) -> None:
    answer = await ask(litellm, [SYSTEM, user("When is our deploy window?")], ALL_TOOLS)

    assert answer.calls == [("memory_search", {"query": "When is our deploy window?"})]


async def test_without_search_a_question_reads_both_memory_files_in_one_response(
    litellm: Any,
) -> None:
    answer = await ask(litellm, [SYSTEM, user("what did we decide about PROJ-1234")], NO_SEARCH)

    assert answer.calls == [
        ("memory_get", {"path": "MEMORY.md"}),
        ("memory_get", {"path": "memory/2026-03-03.md"}),
    ]
    assert len(set(answer.call_ids)) == 2


async def test_without_a_date_in_the_system_prompt_the_injected_clock_names_the_daily_note(
    litellm: Any,
) -> None:
    answer = await ask(litellm, [user("Where did we put the runbook?")], NO_SEARCH)

    assert ("memory_get", {"path": "memory/2030-01-02.md"}) in answer.calls


async def test_small_talk_gets_an_honest_chat_reply(litellm: Any) -> None:
    answer = await ask(litellm, [SYSTEM, user("hello there")], ALL_TOOLS)

    assert answer.calls == []
    assert "offline demo brain" in answer.text
    assert "remember that" in answer.text
    assert answer.finish_reason == "stop"


# --- after tool results -----------------------------------------------------------------------

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
    from shell.memory.search import SearchHit, SearchResult

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


# --- the flush turn ---------------------------------------------------------------------------


def flush_messages(*conversation: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": prompts.flush_system("memory/2026-03-03.md")},
        *conversation,
        user(prompts.flush_prompt("memory/2026-03-03.md", "2026-03-03T16:00")),
    ]


async def test_a_flush_appends_durable_user_facts_not_already_in_memory(litellm: Any) -> None:
    messages = flush_messages(
        user("Hi, how are you?"),
        {"role": "assistant", "content": "Fine, thanks."},
        user("We decided to ship PROJ-1234 on 2026-03-06. I prefer short standups."),
        user("Remember that the staging host is db.internal:5432"),
        called("a0", "memory_append", {"text": "- the staging host is db.internal:5432"}),
        result(
            "a0",
            {
                "path": "memory/2026-03-03.md",
                "appended": 1,
                "skippedDuplicates": 0,
                "commit": "abcdef1234",
            },
        ),
        {"role": "assistant", "content": "Noted."},
    )

    answer = await ask(litellm, messages, [tool("memory_append")])

    assert answer.calls == [
        (
            "memory_append",
            {"text": "- We decided to ship PROJ-1234 on 2026-03-06\n- I prefer short standups"},
        )
    ]

    after = [
        *messages,
        called("f1", "memory_append", answer.calls[0][1]),
        result(
            "f1",
            {
                "path": "memory/2026-03-03.md",
                "appended": 2,
                "skippedDuplicates": 0,
                "commit": "fedcba9876",
            },
        ),
    ]
    done = await ask(litellm, after, [tool("memory_append")])

    assert done.text == prompts.NO_REPLY
    assert done.calls == []


async def test_a_flush_with_nothing_durable_replies_no_reply(litellm: Any) -> None:
    messages = flush_messages(
        user("hello there"),
        {"role": "assistant", "content": "Hi! I'm Cairn's offline demo brain."},
        user("How are you today?"),
    )

    answer = await ask(litellm, messages, [tool("memory_append")])

    assert answer.text == prompts.NO_REPLY
    assert answer.calls == []


async def test_a_flush_skips_facts_already_visible_in_memory_reads(litellm: Any) -> None:
    messages = flush_messages(
        user("Our release codename is Bluebird."),
        called("g1", "memory_get", {"path": "MEMORY.md"}),
        result("g1", {"path": "MEMORY.md", "text": "# Memory\n- Our release codename is Bluebird"}),
    )

    answer = await ask(litellm, messages, [tool("memory_append")])

    assert answer.text == prompts.NO_REPLY


# --- the summariser ---------------------------------------------------------------------------

TRANSCRIPT = """\
User: The build fails with E4012 on host ci-7.internal:8443 since commit 9f3c2ab1.
Assistant: I see. We'll roll back to v2.4.1 for now.
User: We decided the deploy window is 14:00 on 2026-03-06. Never deploy on Fridays.
User: TODO: we need to update docs/runbook.md and ticket PROJ-1234.
Assistant: Noted, see https://wiki.example.com/deploys for the checklist.
User: Can you draft the rollback note for PROJ-1234 before the 14:00 window?"""


def heading_positions(text: str) -> list[int]:
    return [text.index(heading) for heading in prompts.SUMMARY_HEADINGS]


async def summarise(litellm: Any, request: str, *extra: dict[str, Any]) -> str:
    messages = [
        {"role": "system", "content": prompts.summary_system()},
        user(request),
        *extra,
    ]
    answer = await ask(litellm, messages, None)
    assert answer.calls == []
    return answer.text


async def test_the_summary_has_the_five_headings_in_order_and_keeps_identifiers(
    litellm: Any,
) -> None:
    summary = await summarise(litellm, prompts.summary_prompt(TRANSCRIPT, None, None))

    positions = heading_positions(summary)
    assert positions == sorted(positions)
    for identifier in (
        "PROJ-1234",
        "E4012",
        "14:00",
        "2026-03-06",
        "9f3c2ab1",
        "ci-7.internal:8443",
        "docs/runbook.md",
        "v2.4.1",
        "https://wiki.example.com/deploys",
    ):
        assert identifier in summary.split(prompts.SUMMARY_HEADINGS[4])[1], identifier
    asks = summary.split(prompts.SUMMARY_HEADINGS[3])[1].split(prompts.SUMMARY_HEADINGS[4])[0]
    assert "Can you draft the rollback note for PROJ-1234 before the 14:00 window?" in asks
    decisions = summary.split(prompts.SUMMARY_HEADINGS[0])[1].split(prompts.SUMMARY_HEADINGS[1])[0]
    assert "deploy window is 14:00" in decisions
    rules = summary.split(prompts.SUMMARY_HEADINGS[2])[1].split(prompts.SUMMARY_HEADINGS[3])[0]
    assert "Never deploy on Fridays" in rules
    todos = summary.split(prompts.SUMMARY_HEADINGS[1])[1].split(prompts.SUMMARY_HEADINGS[2])[0]
    assert "docs/runbook.md" in todos


async def test_the_summary_merges_the_previous_one_and_marks_empty_sections(
    litellm: Any,
) -> None:
    previous = "\n".join(
        [
            "## Decisions",
            "- Use Postgres 16 for the ledger",
            "## Open TODOs",
            "- none",
            "## Constraints/Rules",
            "- none",
            "## Pending user asks",
            "- none",
            "## Exact identifiers",
            "- LEDGER-77, 3f9a0c1d",
        ]
    )
    summary = await summarise(
        litellm, prompts.summary_prompt("User: thanks, that is all", previous, None)
    )

    assert "- Use Postgres 16 for the ledger" in summary
    assert "LEDGER-77" in summary and "3f9a0c1d" in summary
    todos = summary.split(prompts.SUMMARY_HEADINGS[1])[1].split(prompts.SUMMARY_HEADINGS[2])[0]
    assert todos.strip() == "- none"
    assert "thanks, that is all" in summary


async def test_the_summary_takes_only_decisions_from_the_assistant(litellm: Any) -> None:
    transcript = (
        "User: hello\n"
        'Assistant: Try "remember that our deploy window is Friday 14:00". You should rest.\n'
        "Assistant: We agreed to pin litellm at 1.106.2.\n"
        "User: ok"
    )

    summary = await summarise(litellm, prompts.summary_prompt(transcript, None, None))

    sections = summary.split("\n\n")
    assert sections[0] == "## Decisions\n- We agreed to pin litellm at 1.106.2."
    assert sections[1] == "## Open TODOs\n- none"
    assert "1.106.2" in sections[4]


async def test_a_quality_check_retry_gets_the_same_kind_of_summary(litellm: Any) -> None:
    request = prompts.summary_prompt(TRANSCRIPT, None, None)
    first = await summarise(litellm, request)

    retried = await summarise(
        litellm,
        request,
        {"role": "assistant", "content": "## Decisions\n- something"},
        user(prompts.summary_retry_note(["missing identifier E4012"])),
    )

    assert retried == first


async def test_the_summary_passes_compactions_quality_check(litellm: Any) -> None:
    from shell.lifecycle.summary_check import quality_problems
    from shell.lifecycle.transcript import render_transcript

    ask_text = "Please draft the incident note for INC-2291 and link docs/incidents/2026-03.md"
    body = [
        user("Deploy of 4f2a9c1e at 2026-03-03 16:05 failed with ENOENT on 10.0.4.17:6379."),
        called("s1", "memory_search", {"query": "ENOENT redis"}),
        result(
            "s1",
            {
                "hits": [
                    {
                        "path": "memory/2026-03-01.md",
                        "startLine": 2,
                        "endLine": 2,
                        "snippet": "- redis at cache-1.internal:6379, see MEMORY.md's notes",
                        "citation": "memory/2026-03-01.md#L2-L2",
                    }
                ],
                "mode": "hybrid",
            },
        ),
        {"role": "assistant", "content": "Trace id 0f8fad5b-d9cb-469f-a165-70867728950e."},
        user(ask_text),
    ]
    request = prompts.summary_prompt(render_transcript(body), None, None)

    summary = await summarise(litellm, request)

    assert quality_problems(summary, body, ask_text) == []
    assert "0f8fad5b-d9cb-469f-a165-70867728950e" in summary
    assert "2026-03-03 16:05" in summary


# --- usage, streaming shape, determinism, laziness --------------------------------------------


async def test_usage_is_the_tiktoken_count_of_prompt_and_output(litellm: Any) -> None:
    messages = [
        SYSTEM,
        user("Remember that PROJ-1234 ships Friday."),
        called("a1", "memory_append", {"text": "- PROJ-1234 ships Friday"}),
        result(
            "a1",
            {
                "path": "memory/2026-03-03.md",
                "appended": 1,
                "skippedDuplicates": 0,
                "commit": "abcdef0123",
            },
        ),
    ]

    answer = await ask(litellm, messages, ALL_TOOLS)

    expected_prompt = (
        sum(count_tokens(m["content"] or "") for m in messages)
        + count_tokens(json.dumps({"text": "- PROJ-1234 ships Friday"}))
        + count_tokens(json.dumps(ALL_TOOLS, sort_keys=True))
    )
    assert answer.usage.prompt_tokens == expected_prompt > 0
    assert answer.usage.completion_tokens == count_tokens(answer.text) > 0
    assert answer.usage.total_tokens == expected_prompt + count_tokens(answer.text)


async def test_tool_call_usage_counts_the_arguments(litellm: Any) -> None:
    answer = await ask(litellm, [SYSTEM, user("When is our deploy window?")], ALL_TOOLS)

    arguments = json.dumps({"query": "When is our deploy window?"})
    assert answer.usage.completion_tokens == count_tokens(arguments) > 0


async def test_text_streams_word_by_word_and_tool_arguments_in_pieces(litellm: Any) -> None:
    chat = await ask(litellm, [SYSTEM, user("hello there")], ALL_TOOLS)
    text_pieces = [
        c.choices[0].delta.content for c in chat.chunks if c.choices and c.choices[0].delta.content
    ]
    assert len(text_pieces) == len(chat.text.split())
    assert "".join(text_pieces) == chat.text

    call = await ask(litellm, [SYSTEM, user("When is our deploy window?")], ALL_TOOLS)
    argument_pieces = [
        tc.function.arguments
        for c in call.chunks
        if c.choices
        for tc in c.choices[0].delta.tool_calls or ()
        if tc.function.arguments
    ]
    assert len(argument_pieces) >= 2
    assert json.loads("".join(argument_pieces)) == {"query": "When is our deploy window?"}


async def test_the_same_input_gives_the_same_output(litellm: Any) -> None:
    for messages, tools in (
        ([SYSTEM, user("what did we decide about PROJ-1234")], NO_SEARCH),
        ([SYSTEM, user("tell me a joke")], ALL_TOOLS),
        (
            flush_messages(
                user("We decided to use Postgres."), {"role": "assistant", "content": "Okay."}
            ),
            [tool("memory_append")],
        ),
    ):
        first = await ask(litellm, messages, tools)
        second = await ask(litellm, messages, tools)
        assert (first.text, first.calls, first.call_ids) == (
            second.text,
            second.calls,
            second.call_ids,
        )
        assert first.usage.total_tokens == second.usage.total_tokens


async def test_non_streaming_completion_returns_the_same_reply(litellm: Any) -> None:
    messages = [SYSTEM, user("Remember that our deploy window is Friday 14:00.")]
    response = await litellm.acompletion(model=DEMO_MODEL, messages=messages, tools=ALL_TOOLS)
    streamed = await ask(litellm, messages, ALL_TOOLS)

    call = response.choices[0].message.tool_calls[0]
    assert (call.function.name, json.loads(call.function.arguments)) == streamed.calls[0]
    assert response.choices[0].finish_reason == "tool_calls"
    assert response.usage.total_tokens == streamed.usage.total_tokens


def test_the_sync_paths_give_the_same_reply(litellm: Any) -> None:
    messages = [SYSTEM, user("hello there")]
    response = litellm.completion(model=DEMO_MODEL, messages=messages, tools=ALL_TOOLS)
    chunks = list(
        litellm.completion(
            model=DEMO_MODEL,
            messages=messages,
            tools=ALL_TOOLS,
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    streamed = litellm.stream_chunk_builder(chunks, messages=messages)

    assert "offline demo brain" in response.choices[0].message.content
    assert streamed.choices[0].message.content == response.choices[0].message.content
    assert streamed.usage.total_tokens == response.usage.total_tokens > 0


def test_importing_the_module_does_not_import_litellm() -> None:
    probe = "import shell.demo.provider, sys; print('litellm' in sys.modules)"
    completed = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert completed.stdout.strip() == "False"

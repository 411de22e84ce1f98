"""The offline demo brain, driven through real litellm as the agent drives it: streamed, with
usage, and reassembled with `litellm.stream_chunk_builder`. Normal turns, and the shape of
what it streams: usage, pieces, determinism, the sync paths, and a lazy import."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from shell.config import DEMO_MODEL
from shell.text.tokens import count_tokens
from tests.core.demo_helpers import (
    ALL_TOOLS,
    NO_SEARCH,
    SYSTEM,
    ask,
    called,
    flush_messages,
    result,
    tool,
    user,
)

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

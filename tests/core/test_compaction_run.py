"""compact() through real litellm: against the loopback fake server (the tail kept, the
receipt, retries and the summary by rule, stages) and against the offline demo brain."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from shell import prompts
from shell.events import (
    BaseEvent,
    CompactionFinished,
    CompactionSkipped,
    CompactionStarted,
    TextDelta,
)
from shell.lifecycle.compaction import CompactionResult, split_for_summary
from shell.lifecycle.summary_check import quality_problems
from shell.messages import is_summary_message, summary_message, summary_text
from shell.model import LLM
from tests.core.compaction_helpers import (
    ASK,
    COUNTER,
    IDENTIFIERS,
    KEEP,
    RECENT,
    assistant,
    call,
    conversation,
    count_prompt,
    good_summary,
    history,
    result,
    run,
    user,
    user_prompt,
)
from tests.fakes.openai_script import Fault, Reply
from tests.fakes.openai_server import fake_openai_server

# --- compact() through real litellm and the loopback fake server -----------------------------


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    with fake_openai_server() as fake:
        yield fake


async def _no_sleep(_: float) -> None:
    return None


@pytest.fixture()
def llm(server: Any) -> LLM:
    server.reset()
    return LLM("openai/fake", api_base=server.base_url, max_attempts=1, sleep=_no_sleep)


async def test_compaction_keeps_the_tail_and_writes_a_receipt(server: Any, llm: LLM) -> None:
    messages = history()
    server.enqueue(Reply(text=good_summary()))
    items = await run(llm, messages, KEEP, compaction_count=3)

    assert [type(i) for i in items] == [CompactionStarted, CompactionFinished, CompactionResult]
    started, receipt, outcome = items
    assert started.tokens_before == count_prompt(messages)
    cut = len(messages) - 8
    assert outcome.messages[1:] == messages[cut:]
    assert is_summary_message(outcome.messages[0])
    assert summary_text(outcome.messages[0]) == good_summary().strip()
    assert receipt.tokens_before == outcome.receipt.tokens_before == count_prompt(messages)
    assert receipt.tokens_after == count_prompt(outcome.messages) < receipt.tokens_before
    assert receipt.turns_summarised == 8  # six filler turns, the deploy turn, the ask
    assert receipt.messages_kept == 8
    assert receipt.compaction_count == 4
    assert receipt.attempts == 1
    assert receipt.duration_ms == 250.0
    for heading in prompts.SUMMARY_HEADINGS:
        assert heading in receipt.summary

    (request,) = server.requests
    assert not request.get("tools")  # the summariser is offered no tools
    assert prompts.SUMMARY_MARKER in request["messages"][0]["content"]
    prompt = user_prompt(request)
    assert "User: Question 0:" in prompt and "Tool memory_search → result 0" in prompt
    assert "Question 6:" not in prompt  # the kept tail is not summarised


async def test_a_summary_missing_a_heading_gets_exactly_one_retry(server: Any, llm: LLM) -> None:
    bad = good_summary().replace("## Constraints/Rules\n", "")
    server.enqueue(Reply(text=bad), Reply(text=good_summary()))
    items = await run(llm, history(), KEEP)
    receipt = next(i for i in items if isinstance(i, CompactionFinished))
    assert receipt.attempts == 2
    assert isinstance(items[-1], CompactionResult)
    assert len(server.requests) == 2
    first, second = (user_prompt(r) for r in server.requests)
    assert "quality check" not in first
    assert second.startswith(first)
    assert "quality check" in second and "## Constraints/Rules" in second


async def test_two_bad_summaries_fall_back_on_a_summary_by_rule(server: Any, llm: LLM) -> None:
    bad = good_summary().replace("## Exact identifiers", "## Ids")
    server.enqueue(Reply(text=bad), Reply(text="Summary unavailable due to context limits."))
    messages = history()
    items = await run(llm, messages, KEEP)
    assert [type(i) for i in items] == [CompactionStarted, CompactionFinished, CompactionResult]
    receipt, outcome = items[1], items[2]
    assert receipt.attempts == 2 and len(server.requests) == 2
    assert receipt.fallback is not None and "failed the check" in receipt.fallback
    assert "unavailable" in receipt.fallback
    summary = summary_text(outcome.messages[0])
    assert quality_problems(summary, RECENT, ASK) == []  # it keeps what the check asks for
    assert all(i in summary for i in IDENTIFIERS)
    assert outcome.messages[1:] == messages[len(messages) - 8 :]


async def test_a_summariser_that_cannot_answer_falls_back_on_a_summary_by_rule(
    server: Any, llm: LLM
) -> None:
    server.enqueue(Fault(status=401))
    items = await run(llm, history(), KEEP)
    assert [type(i) for i in items] == [CompactionStarted, CompactionFinished, CompactionResult]
    receipt = items[1]
    assert receipt.attempts == 1
    assert receipt.fallback is not None and "summariser failed" in receipt.fallback
    assert is_summary_message(items[2].messages[0])


async def test_a_good_model_summary_is_not_replaced(server: Any, llm: LLM) -> None:
    server.enqueue(Reply(text=good_summary()))
    items = await run(llm, history(), KEEP)
    assert items[1].fallback is None
    assert summary_text(items[2].messages[0]) == good_summary().strip()


async def test_nothing_to_compact_is_a_skip_without_a_model_call(server: Any, llm: LLM) -> None:
    items = await run(llm, conversation(1), 100_000, trigger="manual")
    assert [type(i) for i in items] == [CompactionStarted, CompactionSkipped]
    assert server.requests == []


async def test_a_previous_summary_is_merged_and_focus_is_passed(server: Any, llm: LLM) -> None:
    previous = "## Decisions\n- Use Postgres 16 (decided 2026-02-11)."
    messages = [summary_message(previous), *history()]
    server.enqueue(Reply(text=good_summary()))
    items = await run(llm, messages, KEEP, focus="keep the rollback plan")
    assert isinstance(items[-1], CompactionResult)
    prompt = user_prompt(server.requests[0])
    assert f"<previous-summary>\n{previous}\n</previous-summary>" in prompt
    assert prompts.COMPACTED_PREFIX not in prompt
    assert "Additional focus: keep the rollback plan" in prompt
    assert sum(is_summary_message(m) for m in items[-1].messages) == 1


async def test_long_tool_results_reach_the_summariser_trimmed(server: Any, llm: LLM) -> None:
    long_result = "HEAD " + "x" * 20_000 + " TAIL"
    messages = [
        user("read the log"),
        call("z"),
        result("z", long_result),
        assistant("done"),
        *conversation(3),
    ]
    server.enqueue(Reply(text=good_summary(identifiers=[], ask="read the log")))
    items = await run(llm, messages, COUNTER.messages(conversation(3)))
    assert isinstance(items[-1], CompactionResult), items[-1]
    prompt = user_prompt(server.requests[0])
    assert "HEAD" in prompt and "TAIL" in prompt and "chars trimmed" in prompt
    assert len(prompt) < 10_000


async def test_streamed_text_is_not_reported_as_chat(server: Any, llm: LLM) -> None:
    server.enqueue(Reply(text=good_summary(), split=3))
    items = await run(llm, history(), KEEP)
    assert not any(isinstance(i, TextDelta) for i in items)
    assert all(isinstance(i, BaseEvent | CompactionResult) for i in items)
    json.dumps([type(i).__name__ for i in items])


async def test_a_long_history_is_summarised_in_stages(server: Any, llm: LLM) -> None:
    # Four requests in a row: a loopback connection the full suite's load dropped once made a
    # stage fail over to the summary by rule; a real run retries, and so does this one (a
    # request the fake never read is not in `server.requests`, one it answered is there once).
    llm = LLM("openai/fake", api_base=server.base_url, max_attempts=3, sleep=_no_sleep)
    messages = history()
    body = messages[: len(messages) - 8]
    limit = COUNTER.messages(body) // 3
    chunks = split_for_summary(body, COUNTER, limit)
    assert len(chunks) >= 3
    assert [m for chunk in chunks for m in chunk] == body
    assert all(chunk[0]["role"] != "tool" for chunk in chunks)  # tool pairs stay together
    stages = [Reply(text=f"## Decisions\n- stage {n}") for n in range(len(chunks) - 1)]
    server.enqueue(*stages, Reply(text=good_summary()))
    items = await run(llm, messages, KEEP, max_transcript_tokens=limit)
    assert isinstance(items[-1], CompactionResult), items[-1]
    assert len(server.requests) == len(chunks)
    prompts_sent = [user_prompt(r) for r in server.requests]
    assert "<previous-summary>" not in prompts_sent[0]
    for n, prompt in enumerate(prompts_sent[1:]):
        assert f"<previous-summary>\n## Decisions\n- stage {n}\n</previous-summary>" in prompt
    assert "Question 0:" in prompts_sent[0] and "Question 0:" not in prompts_sent[-1]
    assert items[-1].receipt.summary == good_summary().strip()


@pytest.mark.parametrize(
    "after",
    [
        [assistant("Noted."), user("Thanks!"), assistant("You are welcome.")],
        [assistant("Noted."), assistant("Anything else?")],  # a last stage without the user
    ],
    ids=["last-stage-with-a-user-message", "last-stage-without"],
)
async def test_the_summary_by_rule_in_stages_keeps_a_commit_of_the_recent_messages(
    server: Any, llm: LLM, after: list[dict[str, Any]]
) -> None:
    # SmolLM2 on a 2,048 window (bench.real_server): the commit of an append sat in the first
    # stage, among the last ten messages the check reads, and the second stage's fold dropped it
    # with the receipts of earlier compactions, so the summary by rule failed its own check and
    # the conversation overflowed.
    commit = "fd3f715da2338843ee7137a8682e961cc52c27e3"
    body = [
        *conversation(2),
        user("Our release train leaves every second Tuesday."),
        call("w", "memory_append", '{"text": "- release train: every second Tuesday"}'),
        result("w", json.dumps({"appended": 1, "commit": commit}), "memory_append"),
        *after,
    ]
    tail = conversation(2, 6)
    limit = COUNTER.messages(after) + 2
    chunks = split_for_summary(body, COUNTER, limit)
    assert len(chunks) >= 2 and chunks[-1] == after
    bad = "## Decisions\n- none"
    server.enqueue(*[Reply(text=bad)] * (len(chunks) + 1))

    items = await run(llm, [*body, *tail], KEEP, max_transcript_tokens=limit)

    assert isinstance(items[-1], CompactionResult), items[-1]
    receipt = items[-1].receipt
    assert receipt.fallback is not None and "failed the check" in receipt.fallback
    assert f"- memory commits: {commit}" in receipt.summary


# --- compact() through real litellm and the offline demo brain -------------------------------


async def test_the_demo_brain_summary_passes_the_quality_check_twice() -> None:
    demo = LLM("cairn-demo/brain", max_attempts=1)
    items = await run(demo, history(), KEEP)
    receipt = next(i for i in items if isinstance(i, CompactionFinished))
    first = items[-1]
    assert isinstance(first, CompactionResult)
    assert receipt.attempts == 1
    assert receipt.tokens_after < receipt.tokens_before
    for heading in prompts.SUMMARY_HEADINGS:
        assert heading in first.receipt.summary
    for identifier in ("OPS-4471", "E4012", "db.internal:5432", "9f3ab21c"):
        assert identifier in first.receipt.summary

    # A second compaction merges the first summary: its identifiers survive the merge.
    later = [
        *first.messages,
        user("Remember that the staging host is stage-2.internal:8443."),
        assistant("Noted."),
        *conversation(3, 20),
    ]
    items = await run(demo, later, COUNTER.messages(conversation(2, 21)) + 5, compaction_count=1)
    second = items[-1]
    assert isinstance(second, CompactionResult), items[-1]
    assert sum(is_summary_message(m) for m in second.messages) == 1
    assert "OPS-4471" in second.receipt.summary
    assert "stage-2.internal:8443" in second.receipt.summary
    assert next(i for i in items if isinstance(i, CompactionFinished)).compaction_count == 2

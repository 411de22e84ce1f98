"""The summariser's prompts as the provider counts them, through real litellm and the loopback
fake server: the calibration learned from its reports, and, where the server must be asked,
each stage counted before its call and split again when the count shows it too big."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shell import prompts
from shell.context.calibration import CalibrationStore, KeptCalibration
from shell.lifecycle.compaction import CompactionResult, split_for_summary
from shell.lifecycle.transcript import render_transcript
from shell.model import LLM
from tests.core.compaction_helpers import (
    COUNTER,
    KEEP,
    good_summary,
    history,
    run,
    user,
    user_prompt,
)
from tests.fakes.openai_script import Reply
from tests.fakes.openai_server import fake_openai_server


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    with fake_openai_server() as fake:
        yield fake


@pytest.fixture()
def llm(server: Any) -> LLM:
    server.reset()
    return LLM("openai/fake", api_base=server.base_url, max_attempts=1)


async def test_the_summariser_learns_how_the_provider_counts_it_and_stages_by_that(
    server: Any, llm: LLM, tmp_path: Path
) -> None:
    # SmolLM2's server counted a summariser's prompt at 1.67× ours (its template escapes every
    # quote): stages sized by our count alone left the summary a tenth of the window
    key = "openai/fake · summariser"
    sizes = CalibrationStore(tmp_path).kept(key, through_origin=True)
    messages = history()
    body = messages[: len(messages) - 8]
    server.enqueue(Reply(text=good_summary(), prompt_tokens=3 * COUNTER.messages(body)))
    items = await run(llm, messages, KEEP, summary_sizes=sizes)
    assert isinstance(items[-1], CompactionResult)
    counted = COUNTER.messages(server.requests[0]["messages"])
    assert sizes.calibration.samples == [(counted, 3 * COUNTER.messages(body))]
    assert CalibrationStore(tmp_path).load(key, through_origin=True) == sizes.calibration

    limit = COUNTER.messages(body)  # the provider's tokens: the whole body by our count
    assert len(split_for_summary(body, COUNTER, limit)) == 1
    theirs = split_for_summary(body, COUNTER, sizes.calibration.counted_within(limit))
    assert len(theirs) >= 2
    server.reset()
    stages = [Reply(text=f"## Decisions\n- stage {n}") for n in range(len(theirs) - 1)]
    server.enqueue(*stages, Reply(text=good_summary()))
    items = await run(llm, messages, KEEP, max_transcript_tokens=limit, summary_sizes=sizes)
    assert isinstance(items[-1], CompactionResult), items[-1]
    assert len(server.requests) == len(theirs)


async def must_be_asked(server: Any, state: Path) -> tuple[LLM, KeptCalibration]:
    """A model on a server that sends no usage when streaming (llama.cpp's), which after its
    first call is asked for each prompt's count before the call (`LLM.counts_before`); and its
    summariser's calibration, kept in `state`."""
    llm = LLM("openai/fake", api_base=server.base_url, max_attempts=1, ask_count=True)
    server.enqueue(Reply(text="hi", streamed_usage=False), Reply(text="h"))
    _ = [item async for item in llm.stream([user("hello")])]
    assert llm.counts_before
    server.reset()
    return llm, CalibrationStore(state).kept("openai/fake · summariser", through_origin=True)


def _asked(transcript: str, previous: str | None = None) -> int:
    """A server's count, at three times ours, of the summariser's request for `transcript`."""
    request = [
        {"role": "system", "content": prompts.summary_system()},
        {"role": "user", "content": prompts.summary_prompt(transcript, previous, None)},
    ]
    return 3 * COUNTER.messages(request)


async def test_where_the_server_must_be_asked_each_stage_is_counted_before_and_resplit_by_it(
    server: Any, tmp_path: Path
) -> None:
    # SmolLM2's server counted a summariser's prompt at up to 1.32× the projection learned from
    # the last one (how many quotes a transcript holds moves its count): where a server sends no
    # usage, each stage is counted before its call, and one the count shows too big is re-split
    llm, sizes = await must_be_asked(server, tmp_path)
    messages = history()
    body = messages[: len(messages) - 8]
    limit = COUNTER.messages(body)  # one stage by our count
    # after the first count, at the provider's rate, the stages are a third of that
    parts = split_for_summary(body, COUNTER, limit // 3)
    assert len(parts) >= 2
    script = [Reply(text="h", prompt_tokens=_asked(render_transcript(body)))]
    previous = None
    for n, part in enumerate(parts):
        text = f"## Decisions\n- stage {n}" if n < len(parts) - 1 else good_summary()
        script += [
            Reply(text="h", prompt_tokens=_asked(render_transcript(part), previous)),
            Reply(text=text, streamed_usage=False),
        ]
        previous = text
    server.enqueue(*script)

    items = await run(llm, messages, KEEP, max_transcript_tokens=limit, summary_sizes=sizes)
    assert isinstance(items[-1], CompactionResult), items[-1]
    assert items[-1].receipt.summary == good_summary().strip()
    first, *rest = server.requests
    assert len(rest) == 2 * len(parts)  # each stage counted once, before its call
    for probe, sent in zip(rest[::2], rest[1::2], strict=True):
        assert probe["max_tokens"] == 1 and not probe.get("stream")
        assert sent["stream"] and sent["messages"] == probe["messages"]
    assert first["max_tokens"] == 1 and "Question 0:" in user_prompt(first)
    counted, reported = sizes.calibration.samples[-1]
    assert reported == 3 * counted


async def test_a_stage_the_server_counts_with_no_room_for_its_reply_is_split_again(
    server: Any, tmp_path: Path
) -> None:
    # SmolLM2's last stage was counted at 1,970 of a 2,048 window (its transcript within the
    # stage's bound, the previous summary on top): three retries, then the summary by rule
    llm, sizes = await must_be_asked(server, tmp_path)
    messages = history()
    body = messages[: len(messages) - 8]
    ours = COUNTER.messages(body)
    whole = _asked(render_transcript(body)) // 3  # counted as we count it
    bound = whole - ours // 2  # half the transcript must go
    parts = split_for_summary(body, COUNTER, ours - ours // 2)
    assert len(parts) >= 2
    script = [Reply(text="h", prompt_tokens=whole)]
    for n in range(len(parts)):  # later counts: the fake's 42, within the bound
        text = f"## Decisions\n- stage {n}" if n < len(parts) - 1 else good_summary()
        script += [Reply(text="h"), Reply(text=text, streamed_usage=False)]
    server.enqueue(*script)

    items = await run(
        llm,
        messages,
        KEEP,
        max_transcript_tokens=10 * ours,
        max_request_tokens=bound,
        summary_sizes=sizes,
    )
    assert isinstance(items[-1], CompactionResult), items[-1]
    assert items[-1].receipt.fallback is None
    calls = [r for r in server.requests if r.get("stream")]
    assert len(calls) == len(parts)
    assert "Question 0:" in user_prompt(calls[0]) and "Question 0:" not in user_prompt(calls[-1])
    assert all(COUNTER.messages(c["messages"]) < whole for c in calls)

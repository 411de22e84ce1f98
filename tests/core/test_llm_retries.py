"""The model client (`shell.model`) when the provider fails, against real litellm and a loopback
fake OpenAI server: retries and backoff, errors that are not retried, and each server's
context overflow."""

from __future__ import annotations

import pytest

from shell.events import ModelRetry, TextDelta
from shell.model import LLM, ModelError, ModelReply
from shell.model.errors import is_overflow, retry_after
from tests.core.llm_helpers import MESSAGES, TOOLS, Sleeps, collect, make_llm
from tests.fakes.openai_script import (
    DROPPED_TEXT,
    OVERFLOW_DIALECTS,
    Fault,
    Reply,
    error_body,
    overflow,
)
from tests.fakes.openai_server import FakeOpenAI

# litellm's own pydantic deprecations; pytest would list them under every test.
pytestmark = pytest.mark.filterwarnings(r"ignore::DeprecationWarning:litellm\.")


async def test_rate_limit_is_retried_honouring_retry_after(server: FakeOpenAI) -> None:
    server.enqueue(Fault(status=429, retry_after=0.05), Reply(text="fine now"))
    sleeps = Sleeps()

    items = await collect(make_llm(server, sleep=sleeps))

    retries = [item for item in items if isinstance(item, ModelRetry)]
    assert len(retries) == 1
    assert (retries[0].attempt, retries[0].max_attempts) == (1, 4)
    assert retries[0].delay_s == pytest.approx(0.05)
    assert "rate limited" in retries[0].reason
    assert retries[0].discard_partial is False
    assert sleeps.delays == [retries[0].delay_s]
    assert isinstance(items[-1], ModelReply) and items[-1].text == "fine now"
    assert len(server.requests) == 2


async def test_server_errors_back_off_exponentially(server: FakeOpenAI) -> None:
    server.enqueue(Fault(status=500), Fault(status=503), Reply(text="recovered"))
    sleeps = Sleeps()

    items = await collect(make_llm(server, sleep=sleeps))

    retries = [item for item in items if isinstance(item, ModelRetry)]
    assert [r.attempt for r in retries] == [1, 2]
    assert [r.delay_s for r in retries] == pytest.approx([0.01, 0.02])
    assert "500" in retries[0].reason and "503" in retries[1].reason
    assert sleeps.delays == pytest.approx([0.01, 0.02])
    assert isinstance(items[-1], ModelReply) and items[-1].text == "recovered"
    assert len(server.requests) == 3


def test_backoff_is_capped_and_jittered() -> None:
    llm = LLM("openai/fake", base_delay=1.0, max_delay=20.0, jitter=lambda: 0.5)

    assert [llm._delay(n, None) for n in (1, 2, 3, 5, 9)] == [0.5, 1.0, 2.0, 8.0, 10.0]
    assert llm._delay(3, retry_after=7.0) == 7.0
    assert llm._delay(3, retry_after=3600.0) == 60.0


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "3"}, 3.0),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),  # a date in the past
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_is_read_from_the_response_headers(
    headers: dict[str, str],
    seconds: float | None,
) -> None:
    error = Exception("429")
    error.litellm_response_headers = headers  # type: ignore[attr-defined]

    assert retry_after(error) == seconds


async def test_a_stream_dropped_midway_is_retried_and_its_text_discarded(
    server: FakeOpenAI,
) -> None:
    server.enqueue(Fault(drop_after_chunks=3), Reply(text="whole answer"))

    items = await collect(make_llm(server))

    kinds = [type(item).__name__ for item in items]
    retry_at = kinds.index("ModelRetry")
    partial = "".join(i.text for i in items[:retry_at] if isinstance(i, TextDelta))
    assert partial == DROPPED_TEXT[:12]
    retry = items[retry_at]
    assert retry.discard_partial is True
    assert "stream dropped" in retry.reason
    reply = items[-1]
    assert isinstance(reply, ModelReply) and reply.text == "whole answer"


@pytest.mark.parametrize("chunks", [0, 2])
async def test_a_stream_that_ends_without_a_finish_reason_is_retried_not_taken_whole(
    server: FakeOpenAI, chunks: int
) -> None:
    server.enqueue(Fault(end_after_chunks=chunks), Reply(text="whole answer"))

    items = await collect(make_llm(server))

    [retry] = [item for item in items if isinstance(item, ModelRetry)]
    assert ("no finish reason" if chunks else "ended empty") in retry.reason
    assert retry.discard_partial is (chunks > 0)
    reply = items[-1]
    assert isinstance(reply, ModelReply) and reply.text == "whole answer"


async def test_a_timeout_is_retried(server: FakeOpenAI) -> None:
    server.enqueue(Fault(delay_s=3.0), Reply(text="in time"))

    items = await collect(make_llm(server, timeout=1.0))  # the retry's answer must fit it too

    retries = [item for item in items if isinstance(item, ModelRetry)]
    assert len(retries) == 1 and "no answer within 1 s" in retries[0].reason
    assert isinstance(items[-1], ModelReply) and items[-1].text == "in time"


@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        (Fault(status=500), "unavailable"),
        (Fault(status=429), "rate_limited"),
        (Fault(drop_after_chunks=2), "unavailable"),
        (Fault(end_after_chunks=2), "unavailable"),
    ],
)
async def test_exhausted_attempts_raise_a_model_error(
    server: FakeOpenAI,
    fault: Fault,
    kind: str,
) -> None:
    server.enqueue(fault, fault, fault)
    llm = make_llm(server, max_attempts=3)
    retries: list[ModelRetry] = []

    with pytest.raises(ModelError) as caught:
        async for item in llm.stream(MESSAGES):
            if isinstance(item, ModelRetry):
                retries.append(item)

    assert caught.value.kind == kind
    assert "3 attempts" in caught.value.message and "\n" not in caught.value.message
    assert [r.attempt for r in retries] == [1, 2]
    assert len(server.requests) == 3


async def test_bad_credentials_fail_at_once_with_a_hint(server: FakeOpenAI) -> None:
    server.enqueue(Fault(status=401))

    with pytest.raises(ModelError) as caught:
        await collect(make_llm(server))

    assert caught.value.kind == "auth"
    assert "Incorrect API key provided" in caught.value.message
    assert "OPENAI_API_KEY" in caught.value.message
    assert len(server.requests) == 1


async def test_a_bad_request_is_not_retried(server: FakeOpenAI) -> None:
    server.enqueue(Fault(status=400, body=error_body(400, "Invalid value for 'temperature'.")))

    with pytest.raises(ModelError) as caught:
        await collect(make_llm(server))

    assert caught.value.kind == "bad_request"
    assert "Invalid value for 'temperature'." in caught.value.message
    assert len(server.requests) == 1


async def test_an_unknown_model_is_not_found(server: FakeOpenAI) -> None:
    server.enqueue(Fault(status=404))

    with pytest.raises(ModelError) as caught:
        await collect(make_llm(server))

    assert caught.value.kind == "not_found"
    assert "openai/fake" in caught.value.message
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "message",
    [
        "This model's maximum context length is 8192 tokens. However, you requested 9100 tokens.",
        "prompt is too long: 210345 tokens > 200000 maximum",
        "Input is too long for requested model.",
    ],
)
async def test_context_overflow_is_recognised(server: FakeOpenAI, message: str) -> None:
    server.enqueue(Fault(status=400, body=error_body(400, message)))

    with pytest.raises(ModelError) as caught:
        await collect(make_llm(server))

    assert caught.value.kind == "context_overflow"
    assert message.split(".")[0] in caught.value.message
    assert len(server.requests) == 1


@pytest.mark.parametrize("dialect", OVERFLOW_DIALECTS)
async def test_each_servers_overflow_is_a_context_overflow(
    server: FakeOpenAI, dialect: str
) -> None:
    faults = overflow(dialect)
    server.enqueue(*faults)

    with pytest.raises(ModelError) as caught:
        await collect(make_llm(server))

    assert caught.value.kind == "context_overflow"
    assert len(server.requests) == len(faults)  # no backoff retries of an overflow
    # the prompt's size in the provider's words (litellm drops llama.cpp's; Ollama's say none)
    assert caught.value.prompt_tokens == (0 if dialect in ("llama.cpp", "ollama") else 2121)


async def test_an_empty_stream_is_asked_again_without_streaming(server: FakeOpenAI) -> None:
    call = ("c1", "memory_get", '{"path": "MEMORY.md"}')
    server.enqueue(Fault(end_after_chunks=0), Reply(text="whole", tool_calls=[call]))

    items = await collect(make_llm(server, max_attempts=1), tools=TOOLS)  # the probe is free

    [retry] = [item for item in items if isinstance(item, ModelRetry)]
    assert "ended empty" in retry.reason and retry.delay_s == 0
    assert [bool(r.get("stream")) for r in server.requests] == [True, False]
    reply = items[-1]
    assert isinstance(reply, ModelReply) and reply.text == "whole"
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [call]
    assert reply.finish_reason == "tool_calls" and reply.prompt_tokens == 42


async def test_an_error_event_mid_stream_is_classified_by_its_words(server: FakeOpenAI) -> None:
    too_long = error_body(400, "the request exceeds the available context size")
    server.enqueue(Fault(error_after_chunks=2, body=too_long))

    with pytest.raises(ModelError) as caught:
        await collect(make_llm(server))

    assert caught.value.kind == "context_overflow"


@pytest.mark.parametrize(
    ("status", "words", "overflow"),
    [
        (400, "This model's maximum context length is 2048 tokens", True),
        (None, "prompt is too long: 9000 tokens > 8192 maximum", True),
        (400, "the request exceeds the available context size, try increasing it", True),
        (400, "The decoder prompt (length 9000) is longer than the maximum model length", True),
        (413, "Request Entity Too Large", True),
        (400, "Invalid value for 'temperature'", False),
        (500, "context window exceeded while the server restarted", False),
        (429, "too many tokens per minute", False),
    ],
)
def test_overflow_is_told_by_status_and_words_alone(
    status: int | None, words: str, overflow: bool
) -> None:
    assert is_overflow(status, words) is overflow

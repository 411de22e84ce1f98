"""The model client (`shell.model`) against real litellm and a loopback fake OpenAI server."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shell.config import DEMO_CONTEXT_WINDOW, DEMO_MODEL
from shell.demo import register as register_demo
from shell.events import Loading, ModelRetry, TextDelta
from shell.model import LLM, ModelError, ModelReply
from shell.model.client import LOCAL_DUMMY_KEY
from shell.model.errors import is_overflow, retry_after
from shell.model.loader import prepare_litellm
from tests.fakes.openai_server import (
    DROPPED_TEXT,
    OVERFLOW_DIALECTS,
    FakeOpenAI,
    Fault,
    Reply,
    error_body,
    fake_openai_server,
    overflow,
)

# litellm's own pydantic deprecations; pytest would list them under every test.
pytestmark = pytest.mark.filterwarnings(r"ignore::DeprecationWarning:litellm\.")

MESSAGES = [{"role": "user", "content": "hello"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "memory_get",
            "description": "Read a memory file.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        },
    }
]


@pytest.fixture(scope="module")
def shared_server() -> Iterator[FakeOpenAI]:
    with fake_openai_server() as server:
        yield server


@pytest.fixture
def server(shared_server: FakeOpenAI) -> Iterator[FakeOpenAI]:
    shared_server.reset()
    yield shared_server
    assert shared_server.pending == 0, "a scripted reply was never requested"


class Sleeps:
    """Records backoff delays instead of waiting them out."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def make_llm(server: FakeOpenAI, **options: Any) -> LLM:
    options = {"base_delay": 0.01, "jitter": lambda: 1.0, "timeout": 10.0, **options}
    return LLM("openai/fake", api_base=server.base_url, **options)


async def collect(llm: LLM, tools: list[dict[str, Any]] | None = None) -> list[Any]:
    return [item async for item in llm.stream(MESSAGES, tools)]


async def test_streamed_text_arrives_in_pieces_then_a_reply_with_usage(server: FakeOpenAI) -> None:
    server.enqueue(
        Reply(text="The cairn marks the trail.", prompt_tokens=120, completion_tokens=7, split=5)
    )

    items = await collect(make_llm(server))

    deltas = [item.text for item in items if isinstance(item, TextDelta)]
    assert deltas == ["The c", "airn ", "marks", " the ", "trail", "."]
    reply = items[-1]
    assert isinstance(reply, ModelReply)
    assert reply.text == "The cairn marks the trail."
    assert reply.tool_calls == []
    assert reply.finish_reason == "stop"
    assert (reply.prompt_tokens, reply.completion_tokens) == (120, 7)


async def test_two_tool_calls_in_one_response_are_reassembled(server: FakeOpenAI) -> None:
    first = json.dumps({"path": "MEMORY.md"})
    second = json.dumps({"query": "what did we decide about the release date?"})
    server.enqueue(
        Reply(
            text="Let me look.",
            split=3,
            tool_calls=[("call_a", "memory_get", first), ("call_b", "memory_search", second)],
        )
    )

    items = await collect(make_llm(server), TOOLS)

    reply = items[-1]
    assert isinstance(reply, ModelReply)
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("call_a", "memory_get", first),
        ("call_b", "memory_search", second),
    ]
    assert reply.text == "Let me look."
    assert reply.finish_reason == "tool_calls"


async def test_malformed_tool_arguments_are_passed_through_raw(server: FakeOpenAI) -> None:
    server.enqueue(Reply(tool_calls=[("c1", "memory_get", "{not json")]))

    reply = (await collect(make_llm(server), TOOLS))[-1]

    assert isinstance(reply, ModelReply)
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("c1", "memory_get", "{not json")
    ]
    assert reply.text == ""


async def test_the_request_streams_with_usage_and_carries_the_tools(server: FakeOpenAI) -> None:
    await collect(make_llm(server), TOOLS)

    (body,) = server.requests
    assert body["model"] == "fake"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["tools"] == TOOLS
    assert body["messages"] == MESSAGES
    assert server.headers[0]["authorization"] == f"Bearer {LOCAL_DUMMY_KEY}"


async def test_without_tools_the_request_has_none(server: FakeOpenAI) -> None:
    await collect(make_llm(server), [])

    assert "tools" not in server.requests[0]


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


async def test_cancelling_the_consumer_propagates_cancelled_error(server: FakeOpenAI) -> None:
    server.enqueue(Fault(delay_s=5.0))
    llm = make_llm(server)
    task = asyncio.create_task(collect(llm))
    assert await asyncio.to_thread(server.wait_for_requests, 1)

    task.cancel()

    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(server.requests) == 1


async def test_a_consumer_may_stop_early_and_the_next_call_still_works(
    server: FakeOpenAI,
) -> None:
    server.enqueue(Reply(text="a long answer nobody waits for", split=2), Reply(text="next"))
    llm = make_llm(server)
    stream = llm.stream(MESSAGES)

    first = await anext(stream)
    await stream.aclose()

    assert first == TextDelta(text="a ")
    reply = (await collect(llm))[-1]
    assert isinstance(reply, ModelReply) and reply.text == "next"


async def test_cancelling_during_backoff_stops_retrying(server: FakeOpenAI) -> None:
    server.enqueue(Fault(status=500))
    entered = asyncio.Event()

    async def hang(delay: float) -> None:
        entered.set()
        await asyncio.Event().wait()

    task = asyncio.create_task(collect(make_llm(server, sleep=hang)))
    await entered.wait()
    task.cancel()

    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(server.requests) == 1


async def test_litellm_prints_nothing_on_failures(
    server: FakeOpenAI,
    capfd: pytest.CaptureFixture[str],
) -> None:
    server.enqueue(Fault(status=401), Fault(drop_after_chunks=1), Reply(text="ok"))
    with pytest.raises(ModelError):
        await collect(make_llm(server))
    await collect(make_llm(server))

    out, err = capfd.readouterr()
    assert (out, err) == ("", "")


async def test_the_demo_brain_streams_through_the_same_door() -> None:
    items = [
        item
        async for item in LLM(DEMO_MODEL).stream(
            [{"role": "system", "content": "You are Cairn."}, {"role": "user", "content": "hi"}]
        )
    ]

    reply = items[-1]
    assert isinstance(reply, ModelReply) and reply.text
    assert "".join(i.text for i in items if isinstance(i, TextDelta)) == reply.text
    assert reply.completion_tokens > 0


def test_context_window_comes_from_model_info_or_is_unknown() -> None:
    assert LLM(DEMO_MODEL).context_window() == (DEMO_CONTEXT_WINDOW, "demo")
    assert LLM("gpt-4o-mini").context_window() == (128_000, "model_info")
    assert LLM("openai/fake", api_base="http://127.0.0.1:9/v1").context_window() == (
        None,
        "unknown",
    )


async def test_the_first_call_announces_that_the_model_is_loading(
    server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shell.model.loader

    prepare_litellm()
    monkeypatch.setattr(shell.model.loader, "_litellm", None)  # as in a fresh process
    server.enqueue(Reply(text="ready"), Reply(text="again"))

    first = await collect(make_llm(server))
    second = await collect(make_llm(server))

    assert first[:2] == [Loading("model", done=False), Loading("model", done=True)]
    assert isinstance(first[-1], ModelReply) and first[-1].text == "ready"
    assert not any(isinstance(item, Loading) for item in second)


def test_prepare_litellm_is_idempotent_and_installs_a_registered_provider_once() -> None:
    register_demo()
    litellm = prepare_litellm()
    register_demo()  # after the import: installed at once, replacing the earlier entry

    assert prepare_litellm() is litellm
    assert litellm.suppress_debug_info is True
    demo_entries = [p for p in litellm.custom_provider_map if p["provider"] == "cairn-demo"]
    assert len(demo_entries) == 1


QUIET_SCRIPT = """
import asyncio, gc, sys
import shell.model, shell.model.loader
print("litellm imported:", "litellm" in sys.modules, "openai" in sys.modules)
from tests.fakes.openai_server import Fault, Reply, fake_openai_server

async def count_ticks_while_importing(ticks):
    while shell.model.loader.loaded_litellm() is None:
        ticks.append(1)
        await asyncio.sleep(0.005)

async def main():
    ticks = []
    ticker = asyncio.create_task(count_ticks_while_importing(ticks))
    with fake_openai_server() as server:
        server.enqueue(Fault(status=401), Fault(drop_after_chunks=1),
                       Reply(text="hi", tool_calls=[("c1", "memory_get", "{}")]))
        llm = shell.model.LLM("openai/fake", api_base=server.base_url, base_delay=0.01)
        try:
            [item async for item in llm.stream([{"role": "user", "content": "x"}])]
        except shell.model.ModelError as error:
            print("error:", error.kind)
        await ticker
        print("event loop ran during the import:", len(ticks) > 1)
        frozen = gc.get_freeze_count() > 100_000
        print("collector back on, the import frozen:", gc.isenabled(), frozen)
        items = [item async for item in llm.stream([{"role": "user", "content": "x"}], TOOLS)]
        print("items:", *[type(item).__name__ for item in items])
        print("window:", *llm.context_window())

TOOLS = [{"type": "function", "function": {"name": "memory_get", "parameters": {"type": "object"}}}]
asyncio.run(main())
"""


@pytest.fixture(scope="module", autouse=True)
def quiet_process() -> Iterator[subprocess.Popen[str]]:
    """The fresh-process check below costs ~6 s of litellm start-up, so it starts with the
    module and runs alongside the other tests; its test only collects the result."""
    process = subprocess.Popen(
        [sys.executable, "-c", QUIET_SCRIPT],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parents[2],
    )
    yield process
    if process.poll() is None:
        process.kill()
        process.communicate()


def test_shell_llm_imports_litellm_lazily_and_keeps_the_terminal_clean(
    quiet_process: subprocess.Popen[str],
) -> None:
    """In a fresh process: no litellm at import; afterwards nothing on stderr (no pytest
    capture or warning filters in the way), which is what a TUI needs; the collector, paused
    for the import, is back on, with the import's objects frozen out of its way."""
    stdout, stderr = quiet_process.communicate(timeout=120)

    assert stderr == ""
    assert stdout.splitlines() == [
        "litellm imported: False False",
        "error: auth",
        "event loop ran during the import: True",
        "collector back on, the import frozen: True True",
        "items: TextDelta ModelRetry TextDelta ModelReply",
        "window: None unknown",
    ]


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

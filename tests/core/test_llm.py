"""The model client (`shell.model`) against real litellm and a loopback fake OpenAI server:
streamed text and tool calls, the request it sends, cancellation, the demo brain, the context
window, loading litellm lazily and quietly."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from shell.config import DEMO_CONTEXT_WINDOW, DEMO_MODEL
from shell.demo import register as register_demo
from shell.events import Loading, TextDelta
from shell.model import LLM, ModelError, ModelReply
from shell.model.client import LOCAL_DUMMY_KEY
from shell.model.loader import prepare_litellm
from tests.core.llm_helpers import MESSAGES, TOOLS, collect, make_llm
from tests.fakes.openai_script import Fault, Reply, overflow
from tests.fakes.openai_server import FakeOpenAI

# litellm's own pydantic deprecations; pytest would list them under every test.
pytestmark = pytest.mark.filterwarnings(r"ignore::DeprecationWarning:litellm\.")


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
from tests.fakes.openai_script import Fault, Reply
from tests.fakes.openai_server import fake_openai_server

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


# --- usage a provider did not send ------------------------------------------------------------


async def test_usage_a_stream_did_not_carry_is_not_made_up(server: FakeOpenAI) -> None:
    """litellm ends such a stream with a usage of its own, counted from the messages alone (no
    tools): a guess that must never calibrate the projection."""
    server.enqueue(Reply(text="hello there", prompt_tokens=1603, streamed_usage=False))

    reply = (await collect(make_llm(server), TOOLS))[-1]

    assert isinstance(reply, ModelReply)
    assert (reply.prompt_tokens, reply.completion_tokens) == (0, 0)
    assert len(server.requests) == 1


async def test_a_local_server_is_asked_for_the_count_its_stream_left_out(
    server: FakeOpenAI,
) -> None:
    server.enqueue(
        Reply(text="hello there", prompt_tokens=1603, streamed_usage=False),
        Reply(text="h", prompt_tokens=1603),  # the whole response to the count's probe
    )

    reply = (await collect(make_llm(server, ask_count=True), TOOLS))[-1]

    assert isinstance(reply, ModelReply) and reply.prompt_tokens == 1603
    stream, probe = server.requests
    assert not probe.get("stream") and probe["max_tokens"] == 1
    assert probe["messages"] == stream["messages"] and probe["tools"] == stream["tools"]


async def test_once_asked_a_server_counts_before_the_call_and_not_after(
    server: FakeOpenAI,
) -> None:
    llm = make_llm(server, ask_count=True)
    assert await llm.count(MESSAGES, TOOLS) == 0 and not server.requests  # not yet known
    server.enqueue(Reply(text="hello", prompt_tokens=1603, streamed_usage=False), Reply(text="h"))
    await collect(llm, TOOLS)
    assert llm.counts_before
    server.reset()
    server.enqueue(Reply(text="h", prompt_tokens=1777), Reply(text="again", streamed_usage=False))

    assert await llm.count(MESSAGES, TOOLS) == 1777
    reply = [item async for item in llm.stream(MESSAGES, TOOLS, counted=True)][-1]

    assert isinstance(reply, ModelReply) and reply.prompt_tokens == 0
    probe, call = server.requests
    assert probe["max_tokens"] == 1 and probe["messages"] == call["messages"]
    server.enqueue(*overflow("openai", requested=2121))  # the size a refusal names
    assert await llm.count(MESSAGES, TOOLS) == 2121


async def test_a_stream_that_reported_usage_needs_no_probe(server: FakeOpenAI) -> None:
    server.enqueue(Reply(text="hello", prompt_tokens=900))

    reply = (await collect(make_llm(server, ask_count=True)))[-1]

    assert isinstance(reply, ModelReply) and reply.prompt_tokens == 900
    assert len(server.requests) == 1

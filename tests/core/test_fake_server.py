"""The fake OpenAI server's wire format, read with the stdlib (no litellm)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tests.fakes.openai_script import Fault, Reply
from tests.fakes.openai_server import FakeOpenAI, fake_openai_server


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAI]:
    with fake_openai_server() as server:
        yield server


def post(server: FakeOpenAI, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(
        f"{server.base_url}/chat/completions",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def sse_events(raw: bytes) -> list[str]:
    return [
        line.removeprefix("data: ")
        for line in raw.decode().splitlines()
        if line.startswith("data: ")
    ]


def test_models_are_listed(server: FakeOpenAI) -> None:
    with urllib.request.urlopen(f"{server.base_url}/models", timeout=5) as response:
        listing = json.load(response)

    assert [m["id"] for m in listing["data"]] == ["fake"]


def test_a_plain_completion_carries_tool_calls_and_usage(server: FakeOpenAI) -> None:
    server.reset()
    server.enqueue(
        Reply(
            text="hi",
            tool_calls=[("c1", "memory_get", '{"path": "MEMORY.md"}')],
            prompt_tokens=5,
            completion_tokens=2,
        )
    )

    status, _, raw = post(server, {"model": "fake", "messages": []})

    completion = json.loads(raw)
    assert status == 200
    choice = completion["choices"][0]
    assert choice["message"]["content"] == "hi"
    assert choice["message"]["tool_calls"][0]["function"] == {
        "name": "memory_get",
        "arguments": '{"path": "MEMORY.md"}',
    }
    assert choice["finish_reason"] == "tool_calls"
    assert completion["usage"] == {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}


def test_a_stream_sends_pieces_then_finish_then_usage_then_done(server: FakeOpenAI) -> None:
    server.reset()
    server.enqueue(Reply(text="abcdef", tool_calls=[("c1", "t", "{not json")], split=3))

    status, headers, raw = post(
        server,
        {
            "model": "fake",
            "messages": [],
            "stream": True,
            "stream_options": {"include_usage": True},
        },
    )

    assert status == 200 and headers["Content-Type"] == "text/event-stream"
    events = sse_events(raw)
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    assert [d.get("content") for d in deltas if d.get("content")] == ["abc", "def"]
    pieces = [d["tool_calls"][0]["function"]["arguments"] for d in deltas if "tool_calls" in d]
    assert pieces == ["", "{no", "t j", "son"]
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] == 51


def test_faults_answer_with_an_error_body_and_retry_after(server: FakeOpenAI) -> None:
    server.reset()
    server.enqueue(Fault(status=429, retry_after=2))

    status, headers, raw = post(server, {"model": "fake", "messages": []})

    assert status == 429
    assert headers["Retry-After"] == "2"
    assert json.loads(raw)["error"]["code"] == "rate_limit_exceeded"
    assert len(server.requests) == 1


def test_an_empty_script_answers_ok(server: FakeOpenAI) -> None:
    server.reset()

    _, _, raw = post(server, {"model": "fake", "messages": []})

    assert json.loads(raw)["choices"][0]["message"]["content"] == "ok"

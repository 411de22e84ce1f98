"""The agent loop when the provider fails: retries shown as events, errors retrying cannot fix,
cut-off replies, and a dead port, against a loopback fake OpenAI server."""

from __future__ import annotations

from dataclasses import replace

import pytest

from shell import events as ev
from shell.build import build_agent
from shell.config import Settings
from tests.core.agent_helpers import collect, of, started
from tests.fakes.openai_script import Fault, Reply
from tests.fakes.openai_server import FakeOpenAI


async def test_rate_limit_is_retried_with_an_event(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(fake_settings)
    fake_openai.enqueue(Fault(status=429), Reply(text="ok now"))
    events = await collect(agent.submit("hi"))
    [retry] = of(events, ev.ModelRetry)
    assert (retry.attempt == 1 and "429" in retry.reason) or "rate" in retry.reason.lower()
    assert events[-1].reason == "completed"  # type: ignore[attr-defined]
    await agent.aclose()


async def test_auth_error_ends_the_turn_clearly(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(fake_settings)
    fake_openai.enqueue(Fault(status=401))
    events = await collect(agent.submit("hi"))
    [error] = of(events, ev.Error)
    assert error.kind == "auth"
    assert events[-1] == ev.TurnFinished(turn=1, reason="error")
    assert len(fake_openai.requests) == 1
    await agent.aclose()


async def test_a_reply_cut_short_is_never_stored_as_a_whole_one(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(fake_settings)
    attempts = fake_settings.max_attempts
    fake_openai.enqueue(*[Fault(end_after_chunks=2) for _ in range(attempts)])
    events = await collect(agent.submit("hi"))
    assert len(of(events, ev.ModelRetry)) == attempts - 1
    [error] = of(events, ev.Error)
    assert "no finish reason" in error.message
    assert error.discard_partial  # the text it streamed is void on screen too
    assert events[-1].reason == "error"  # type: ignore[attr-defined]
    assert not of(events, ev.AssistantMessage)
    assert [m["role"] for m in agent.messages] == ["user"]
    assert [m["role"] for m in agent.conversation.sessions.messages(agent.session_id)] == ["user"]

    fake_openai.enqueue(Reply(text="All there."))
    events = await collect(agent.submit("again"))
    assert of(events, ev.AssistantMessage)[0].text == "All there."
    await agent.aclose()


FAULTS = {
    "429 with retry-after": Fault(status=429, retry_after=0.01),
    "429 without retry-after": Fault(status=429),
    "500": Fault(status=500),
    "503": Fault(status=503),
    "timeout": Fault(delay_s=3.0),
    "socket closed mid-stream": Fault(drop_after_chunks=3),
    "no finish reason, no [DONE]": Fault(end_after_chunks=3),
    "empty stream": Fault(end_after_chunks=0),
    "error event mid-stream": Fault(error_after_chunks=2),
    "a chunk that is not JSON": Fault(garbage_after_chunks=2),
}


@pytest.mark.parametrize("name", FAULTS)
async def test_each_provider_fault_is_retried_visibly_and_loses_nothing(
    fake_settings: Settings, fake_openai: FakeOpenAI, name: str
) -> None:
    # Short only where the fault is a slow answer: a loaded machine can take half a second to
    # answer on loopback, and a spurious timeout would eat the reply scripted for the retry.
    timeout = 1.5 if name == "timeout" else fake_settings.request_timeout
    settings = replace(fake_settings, request_timeout=timeout)
    agent = await started(settings)
    fake_openai.enqueue(Reply(text="first answer"))
    await collect(agent.submit("first question"))
    memory = (settings.workspace / "MEMORY.md").read_bytes()
    fake_openai.enqueue(FAULTS[name], Reply(text="answer after the fault"))

    events = await collect(agent.submit("second question"))

    assert of(events, ev.ModelRetry), "the retry is shown"
    assert of(events, ev.AssistantMessage)[-1].text == "answer after the fault"
    assert events[-1] == ev.TurnFinished(turn=2, reason="completed")
    assert "cut off before it ends" not in str(agent.messages)  # no partial reply kept
    assert build_agent(settings, resume=True).messages == agent.messages
    assert (settings.workspace / "MEMORY.md").read_bytes() == memory
    fake_openai.enqueue(Reply(text="third answer"))
    assert (await collect(agent.submit("third question")))[-1].reason == "completed"  # type: ignore[attr-defined]
    await agent.aclose()


@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        (Fault(status=401), "auth"),
        (Fault(status=400), "bad_request"),
        (Fault(status=404), "not_found"),
    ],
)
async def test_a_fault_retrying_cannot_fix_ends_the_turn_with_a_clear_error(
    fake_settings: Settings, fake_openai: FakeOpenAI, fault: Fault, kind: str
) -> None:
    agent = await started(fake_settings)
    fake_openai.enqueue(fault)

    events = await collect(agent.submit("question"))

    [error] = of(events, ev.Error)
    assert error.kind == kind and "\n" not in error.message
    assert events[-1] == ev.TurnFinished(turn=1, reason="error")
    assert build_agent(fake_settings, resume=True).messages == agent.messages
    fake_openai.enqueue(Reply(text="fine now"))
    assert (await collect(agent.submit("again")))[-1].reason == "completed"  # type: ignore[attr-defined]
    await agent.aclose()


async def test_a_dead_port_is_a_clear_error_after_the_retries(
    fake_settings: Settings, refused_port: int
) -> None:
    settings = replace(
        fake_settings, api_base=f"http://127.0.0.1:{refused_port}/v1", max_attempts=2
    )
    agent = await started(settings)

    events = await collect(agent.submit("anyone there?"))

    [error] = of(events, ev.Error)
    assert error.kind == "unavailable" and "2 attempts" in error.message
    [retry] = of(events, ev.ModelRetry)
    assert retry.reason.startswith("connection failed")
    assert events[-1] == ev.TurnFinished(turn=1, reason="error")
    await agent.aclose()

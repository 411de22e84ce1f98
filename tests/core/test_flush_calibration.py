"""The flush's prompts have a calibration of their own: the turn's prompt with the flush
instructions and one tool, which a chat template may render at another rate than the turn's
(SmolLM2's server counted them at 1.24× the turns' projection). The flush learns from the
provider's count of its own calls and fits what it sends by it."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from shell import events as ev
from shell.agent import Agent
from shell.config import Settings
from shell.context.calibration import CalibrationStore
from tests.core.agent_helpers import collect, of, started
from tests.fakes.openai_script import Reply
from tests.fakes.openai_server import FakeOpenAI

RATE = 3.9  # believable (under 4), and past the window for this conversation


async def talked(settings: Settings, server: FakeOpenAI) -> Agent:
    """An agent on a 16k window after ten turns of about 300 tokens each."""
    agent = await started(replace(settings, context_window=16_000))
    for i in range(10):
        server.enqueue(Reply(text=f"answer {i} " + "words " * 150))
        await collect(agent.submit(f"question {i} " + "filler " * 150))
    return agent


def counted(agent: Agent, request: dict[str, Any]) -> int:
    """Our count of a request's prompt: its messages and its tools."""
    counter = agent.request_builder.counter
    return counter.messages(request["messages"]) + counter.tools(request["tools"])


async def test_the_flush_learns_the_providers_count_and_fits_what_it_sends_by_it(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await talked(fake_settings, fake_openai)
    builder, conversation = agent.request_builder, agent.conversation.messages
    fake_openai.reset()
    fake_openai.enqueue(Reply(text="NO_REPLY"))  # the fake's 42 tokens: not believable
    await collect(agent.flush())
    [first] = fake_openai.requests
    assert not builder.flushes.calibration.calibrated
    assert len(first["messages"]) == len(conversation) + 2  # all of it fits by our count
    assert len(first["tools"]) == 1

    fake_openai.reset()
    reported = round(RATE * counted(agent, first))
    fake_openai.enqueue(Reply(text="NO_REPLY", prompt_tokens=reported))
    await collect(agent.flush())
    assert builder.flushes.calibration.samples == [
        (counted(agent, fake_openai.requests[0]), reported)
    ]
    assert not builder.turns.calibration.calibrated  # the turns' line learns nothing from it
    key = f"{builder.model_key} · flush"
    kept = CalibrationStore(agent.settings.state_dir).load(key, through_origin=True)
    assert kept == builder.flushes.calibration

    fake_openai.reset()
    fake_openai.enqueue(Reply(text="NO_REPLY", prompt_tokens=reported))
    events = await collect(agent.flush())
    [trimmed] = fake_openai.requests
    # the replies shortened, or the oldest turns gone
    assert counted(agent, trimmed) < counted(agent, first)
    assert builder.flushes.calibration.project(counted(agent, trimmed)) < agent.budget.window
    assert of(events, ev.FlushFinished)[0].outcome == "no_reply"
    await agent.aclose()


async def test_where_the_server_must_be_asked_the_flush_is_counted_before_its_call(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    # SmolLM2's server: a calibrated flush was projected at 0.80 of its count when the prompt's
    # new text was quote-dense (its template escapes every quote); its count of the very prompt
    # is what the flush must fit by
    agent = await talked(fake_settings, fake_openai)
    fake_openai.enqueue(Reply(text="noted", streamed_usage=False), Reply(text="h"))
    await collect(agent.submit("one more thing"))  # no usage in the stream: asked after
    assert agent.llm.counts_before
    builder = agent.request_builder

    fake_openai.reset()  # the fake's 42 tokens: not believable, so nothing is refitted
    fake_openai.enqueue(Reply(text="h"), Reply(text="NO_REPLY", streamed_usage=False))
    await collect(agent.flush())
    probe, call = fake_openai.requests  # counted before, and not asked again after
    assert probe["max_tokens"] == 1 and not probe.get("stream")
    assert probe["messages"] == call["messages"] and call["stream"]

    size = counted(agent, probe)
    fake_openai.reset()
    fake_openai.enqueue(
        Reply(text="h", prompt_tokens=round(RATE * size)),  # too big for the window
        Reply(text="NO_REPLY", streamed_usage=False),
        Reply(text="h"),  # what is sent now was not counted: asked after
    )
    events = await collect(agent.flush())
    probe, call, after = fake_openai.requests
    assert builder.flushes.calibration.samples[-1] == (size, round(RATE * size))
    sent = counted(agent, call)
    assert sent < size and builder.flushes.calibration.project(sent) < agent.budget.window
    assert after["max_tokens"] == 1 and after["messages"] == call["messages"]
    assert of(events, ev.FlushFinished)[0].outcome == "no_reply"
    await agent.aclose()

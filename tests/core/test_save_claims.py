"""An answer claiming a save in a turn that wrote nothing is said beside it, through the real
loop against the loopback OpenAI-compatible fake."""

from __future__ import annotations

import json

import pytest

from shell import events as ev
from shell.build import build_agent
from shell.config import Settings
from shell.loop.save_claims import UNSAVED_NOTICE, claims_a_save
from tests.core.agent_helpers import collect, of
from tests.fakes.openai_script import Reply
from tests.fakes.openai_server import FakeOpenAI


@pytest.mark.parametrize(
    "answer",
    [
        "I've noted that the review is on 9 December.",
        "Got it! I'll remember that you live in Tromsø.",
        "I have saved your preference.",
        "I saved it.",
        "Noted. Anything else?",
        "That's now stored in memory.",
        "I added it to your daily note.",
        "I’ll keep that in mind for next time.",
    ],
)
def test_first_person_claims_of_a_save_are_read(answer: str) -> None:
    assert claims_a_save(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "As you noted, the review moved.",
        "I remember that you live in Tromsø.",
        "The file was saved by your editor.",
        "Here is a story about a lighthouse keeper.",
        "I wrote you a short poem about the sea.",
        "Here it is; I added a twist at the end.",
    ],
)
def test_recall_and_other_peoples_saves_are_not_claims(answer: str) -> None:
    assert not claims_a_save(answer)


def warnings(events: list[ev.BaseEvent]) -> list[str]:
    return [n.message for n in of(events, ev.Notice) if n.level == "warning"]


async def test_a_claimed_save_without_a_write_is_said(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = build_agent(fake_settings, index_in_background=False, interactive=False)
    await collect(agent.start())
    fake_openai.enqueue(Reply(text="I've noted that, thanks!"))
    events = await collect(agent.submit("Tell me a joke."))
    assert not of(events, ev.MemoryWritten)
    assert UNSAVED_NOTICE in warnings(events)
    assert isinstance(events[-1], ev.TurnFinished) and events[-1].reason == "completed"
    await agent.aclose()


async def test_a_claimed_save_that_was_written_is_not_flagged(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = build_agent(fake_settings, index_in_background=False, interactive=False)
    await collect(agent.start())
    text = json.dumps({"text": "The user likes jokes about sailing."})
    fake_openai.enqueue(
        Reply(tool_calls=[("w1", "memory_append", text)]), Reply(text="I've saved that.")
    )
    events = await collect(agent.submit("Tell me a joke."))
    assert of(events, ev.MemoryWritten)
    assert UNSAVED_NOTICE not in warnings(events)
    await agent.aclose()

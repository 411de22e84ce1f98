"""The calls Cairn makes for a model that does not use its memory tools (`memory_assist`):
through the agent, against real litellm, the loopback server and real git, a question is
searched before the model answers and a "remember that …" the model did not write is kept;
a model that writes for itself is never overruled, and what a user pastes is redacted."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from shell import events as ev
from shell import prompts
from shell.config import ConfigError, Settings, load_settings
from shell.loop.assist import fact_to_remember, question_in
from shell.memory.tools import as_fact_lines
from shell.model.textcalls import assists
from tests.core.agent_helpers import collect, of, started
from tests.fakes.openai_script import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.git_read import blob, commit


def today_note(settings: Settings) -> str:
    return f"memory/{settings.today()}.md"


@pytest.fixture
def assisted(fake_settings: Settings) -> Settings:
    return replace(fake_settings, memory_assist="auto")  # the loopback server is local


@pytest.mark.parametrize(
    ("prompt", "fact"),
    [
        (
            "Please remember that the Heron design review is on 9 December.",
            "The Heron design review is on 9 December.",
        ),
        (
            "remember: our backup bucket is cairn-backups-eu",
            "Our backup bucket is cairn-backups-eu",
        ),
        ("Keep in mind that\nPriya leads billing.", "Priya leads billing."),
        ("Note that the API gateway runs on Envoy.", "The API gateway runs on Envoy."),
        (
            "Don't forget: my dentist appointment moved to Thursday at 10, ok?",
            "My dentist appointment moved to Thursday at 10",
        ),
        (
            "Jot this down for me - the spare key is under the blue pot.",
            "The spare key is under the blue pot.",
        ),
        ("Make a note of this: the VPN is vpn-eu-2.", "The VPN is vpn-eu-2."),
        ("Do you remember that the review moved?", None),
        ("remember that?", None),
        ("Our release train leaves every second Tuesday.", None),
        ("I remember that it rained.", None),
    ],
)
def test_what_a_prompt_asks_to_remember(prompt: str, fact: str | None) -> None:
    assert fact_to_remember(prompt) == fact


def test_only_a_question_is_searched() -> None:
    assert question_in("When is the Heron\n design review?") == "When is the Heron design review?"
    assert question_in("Tell me a story.") is None
    assert question_in("remember that the review is on Monday?") is None
    assert question_in("Don't forget: the review moved to Thursday, ok?") is None
    assert question_in("Is the review on Thursday, ok?") == "Is the review on Thursday, ok?"


def test_auto_means_a_local_server_and_the_setting_is_checked() -> None:
    assert assists("auto", "http://127.0.0.1:8090/v1") and assists("on", None)
    assert not assists("auto", None) and not assists("auto", "https://api.openai.com/v1")
    assert not assists("off", "http://localhost:11434")
    with pytest.raises(ConfigError, match="memory_assist 'always' must be auto, on or off"):
        load_settings({"memory_assist": "always"}, env={})


async def test_a_remember_the_model_did_not_write_is_kept_after_its_answer(
    assisted: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(assisted)
    fake_openai.enqueue(Reply(text="Good idea! I'll keep you posted."))

    events = await collect(agent.submit("Please remember that the Heron review is on 9 December."))

    [call] = of(events, ev.ToolCallStarted)
    assert call.by_cairn and not call.from_text and call.name == "memory_append"
    kinds = [type(e) for e in events]
    assert kinds.index(ev.AssistantMessage) < kinds.index(ev.ToolCallStarted)
    [written] = of(events, ev.MemoryWritten)
    assert written.outcome == "committed" and written.path == today_note(assisted)
    assert commit(agent.workspace, written.commit).files == [written.path]
    assert b"The Heron review is on 9 December." in blob(agent.workspace, "HEAD", written.path)
    assert events[-1] == ev.TurnFinished(turn=1, reason="completed")
    assert len(fake_openai.requests) == 1  # no second call: the answer was given

    fake_openai.enqueue(Reply(text="Hello."))
    await collect(agent.submit("hello"))
    sent = fake_openai.requests[1]["messages"]
    call_message, result = sent[-3], sent[-2]
    assert call_message["tool_calls"][0]["function"]["name"] == "memory_append"
    assert json.loads(result["content"])["appended"] == 1  # the model is told it was kept
    await agent.aclose()


async def test_a_model_that_writes_for_itself_is_not_written_for(
    assisted: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(assisted)
    append = ("c1", "memory_append", json.dumps({"text": "Heron review: 9 December"}))
    fake_openai.enqueue(Reply(tool_calls=[append]), Reply(text="Saved."))

    events = await collect(agent.submit("remember that the Heron review is on 9 December"))

    assert [(c.name, c.by_cairn) for c in of(events, ev.ToolCallStarted)] == [
        ("memory_append", False)
    ]
    assert len(of(events, ev.MemoryWritten)) == 1
    await agent.aclose()


async def test_a_question_is_searched_and_the_model_answers_from_the_result(
    assisted: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(assisted)
    fake_openai.enqueue(Reply(text="Noted."))
    await collect(agent.submit("remember that the Heron review is on 9 December"))
    fake_openai.enqueue(Reply(text="On 9 December."))

    events = await collect(agent.submit("When is the Heron review?"))

    [call] = of(events, ev.ToolCallStarted)
    assert call.by_cairn and call.name == "memory_search"
    assert call.arguments == {"query": "When is the Heron review?"}
    [search] = of(events, ev.SearchPerformed)
    assert any("Heron review" in hit.snippet for hit in search.hits)
    kinds = [type(e) for e in events]
    assert kinds.index(ev.ToolCallFinished) < kinds.index(ev.AssistantMessage)
    sent = fake_openai.requests[-1]["messages"]
    assert (
        sent[-3]["role"] == "user" and sent[-2]["tool_calls"][0]["id"] == sent[-1]["tool_call_id"]
    )
    assert sent[-2]["content"] == ""  # llama.cpp's chatml-function-calling template 500s on null
    result = json.loads(sent[-1]["content"])
    assert result["results"][0]["citation"].startswith(today_note(assisted))
    await agent.aclose()


async def test_nothing_is_made_for_a_hosted_model_or_with_the_setting_off(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(fake_settings)  # memory_assist off
    fake_openai.enqueue(Reply(text="Sure."), Reply(text="I do not know."))

    events = await collect(agent.submit("remember that the Heron review is on 9 December"))
    events += await collect(agent.submit("When is the Heron review?"))

    assert not of(events, ev.ToolCallStarted) and not of(events, ev.MemoryWritten)
    await agent.aclose()


async def test_a_secret_the_user_asks_to_remember_is_redacted_by_the_same_door(
    assisted: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(assisted)
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    fake_openai.enqueue(Reply(text="OK."))

    events = await collect(agent.submit(f"remember that the deploy token is {token}"))

    [written] = of(events, ev.MemoryWritten)
    kept = blob(agent.workspace, "HEAD", written.path)
    assert token.encode() not in kept and b"the deploy token is" in kept.lower()
    await agent.aclose()


async def test_a_model_cairn_searches_for_is_not_shown_a_citing_template(
    assisted: Settings, fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    systems = []
    for settings in (assisted, fake_settings):
        agent = await started(settings)
        fake_openai.enqueue(Reply(text="Hello."))
        await collect(agent.submit("hello"))
        systems.append(fake_openai.requests[-1]["messages"][0]["content"])
        await agent.aclose()

    assisted_system, hosted_system = systems
    assert prompts.ASSISTED_RECALL in assisted_system and "Source:" not in assisted_system
    assert prompts.MEMORY_RECALL in hosted_system and prompts.ASSISTED_RECALL not in hosted_system


async def test_a_flush_the_model_stores_nothing_in_keeps_what_the_user_told(
    assisted: Settings, fake_openai: FakeOpenAI
) -> None:
    """Small models answer the flush with NO_REPLY: what was told without "remember" is kept by
    rule, in the user's words, through the pinned tool (a card by Cairn), before it is gone."""
    agent = await started(assisted)
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    told = [  # facts told with a question: the turn searches, and keeps nothing
        "Our release train leaves every second Tuesday, when is the next one?",
        "Tell me a short story about a fox.",
        f"The API gateway runs on Envoy and its deploy token is {token}, is that safe?",
    ]
    for prompt in told:
        fake_openai.enqueue(Reply(text="OK."))
        await collect(agent.submit(prompt))
    fake_openai.enqueue(Reply(text=prompts.NO_REPLY))

    events = await collect(agent.submit("/flush"))

    [finished] = of(events, ev.FlushFinished)
    assert (finished.outcome, finished.by_rule, finished.lines) == ("written", True, 3)
    [call] = of(events, ev.ToolCallStarted)
    assert call.by_cairn and call.name == "memory_append"
    kept = blob(agent.workspace, "HEAD", finished.target).decode()
    assert "- Our release train leaves every second Tuesday\n" in kept
    assert "Envoy" in kept and token not in kept  # the same door redacts what the user pasted
    assert "fox" not in kept  # a request is not a fact

    fake_openai.enqueue(Reply(text="OK."))  # kept at its turn, as said; the flush, cleaned
    await collect(agent.submit("Please remember that the Heron review is on 9 May."))
    fake_openai.enqueue(Reply(text=prompts.NO_REPLY))
    again = await collect(agent.submit("/flush"))
    [second] = of(again, ev.FlushFinished)
    assert (second.outcome, second.by_rule) == ("no_reply", False)  # nothing new: no commit
    assert not of(again, ev.MemoryWritten)
    await agent.aclose()


async def test_a_flush_the_model_writes_itself_gets_no_rule_flush_and_nor_does_a_hosted_one(
    assisted: Settings, fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(assisted)
    fake_openai.enqueue(Reply(text="OK."))
    await collect(agent.submit("Our release train leaves every second Tuesday, right?"))
    append = ("f1", "memory_append", json.dumps({"text": "- Release train: every 2nd Tuesday"}))
    fake_openai.enqueue(Reply(tool_calls=[append]), Reply(text=prompts.NO_REPLY))
    events = await collect(agent.submit("/flush"))
    [finished] = of(events, ev.FlushFinished)
    assert (finished.outcome, finished.by_rule) == ("written", False)
    assert [c.by_cairn for c in of(events, ev.ToolCallStarted)] == [False]
    await agent.aclose()

    hosted = await started(fake_settings)  # memory_assist off
    fake_openai.enqueue(Reply(text="OK."), Reply(text=prompts.NO_REPLY))
    await collect(hosted.submit("Our release train leaves every second Tuesday."))
    [finished] = of(await collect(hosted.submit("/flush")), ev.FlushFinished)
    assert (finished.outcome, finished.by_rule) == ("no_reply", False)
    await hosted.aclose()


def test_bare_lines_appended_to_a_note_become_facts_of_their_own() -> None:
    assert as_fact_lines("My name is Ada.\nThe review is on 9 December.") == (
        "- My name is Ada.\n- The review is on 9 December."
    )
    kept = "- an item\n  its continuation\n## 14:00\n```\nplain code\n```\n> quoted\n| a |\n2. two"
    assert as_fact_lines(kept) == kept


async def test_facts_a_small_model_appends_bare_are_each_found_on_their_own(
    assisted: Settings, fake_openai: FakeOpenAI
) -> None:
    """Qwen2.5-Coder-1.5B appended "My name is Ada …" and then Cairn "The Heron …", both bare:
    one Markdown paragraph, one unit of recall, and "What is my name?" found nothing."""
    agent = await started(assisted)
    append = ("c1", "memory_append", json.dumps({"text": "My name is Ada and I live in Tromsø."}))
    fake_openai.enqueue(Reply(tool_calls=[append]), Reply(text="Nice to meet you, Ada."))
    await collect(agent.submit("Hi! My name is Ada and I live in Tromsø."))
    fake_openai.enqueue(Reply(text="I will."))
    await collect(agent.submit("Please remember that the Heron design review is on 9 December."))
    fake_openai.enqueue(Reply(text="Your name is Ada."))

    events = await collect(agent.submit("What is my name?"))

    [search] = of(events, ev.SearchPerformed)
    assert not search.nothing_relevant
    first = search.hits[0]
    assert first.snippet == "- My name is Ada and I live in Tromsø."
    assert first.citation == f"{today_note(assisted)}#L1-L1"
    [sourced] = of(events, ev.AnswerSourced)
    assert sourced.citation == first.citation
    await agent.aclose()


async def test_a_fact_told_without_remember_is_kept_at_its_turn(
    assisted: Settings, fake_openai: FakeOpenAI
) -> None:
    """The model answered "I remember that our release train …" and wrote nothing: a question
    a few turns later found nothing, until the flush."""
    agent = await started(assisted)
    fake_openai.enqueue(
        Reply(text="I remember that our release train leaves every second Tuesday.")
    )

    events = await collect(agent.submit("Our release train leaves every second Tuesday."))

    [call] = of(events, ev.ToolCallStarted)
    assert call.by_cairn and call.arguments == {
        "text": "Our release train leaves every second Tuesday"
    }
    [written] = of(events, ev.MemoryWritten)
    kept = blob(agent.workspace, "HEAD", written.path).decode()
    assert kept == "- Our release train leaves every second Tuesday\n"
    fake_openai.enqueue(Reply(text="Once upon a time."))
    story = await collect(agent.submit("Tell me a short story about a fox."))
    assert not of(story, ev.ToolCallStarted)  # a request is no fact
    await agent.aclose()

"""Cancelling a turn (`Agent.cancel`): it stops at the next safe point and says what happened.

A memory write under way is never cut: it finishes, commits and reports its real result; the
calls after it do not run and say so; a model call under way is aborted; the conversation stays
valid for the next turn. The slow write is real: the commit waits for the repository's commit
lock, which another write of this process (a dreaming decision, say) holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import replace

from shell import events as ev
from shell.config import Settings
from shell.git.lock import repo_lock
from tests.core.agent_helpers import of, started
from tests.fakes.openai_script import Fault, Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.git_read import commit

APPEND = ("c1", "memory_append", '{"text": "- locker 0.2 holds the spare keys"}')
SEARCH = ("c2", "memory_search", '{"query": "spare keys"}')


async def test_a_cancel_during_a_write_lets_it_commit_and_stops_the_rest(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(fake_settings)
    fake_openai.enqueue(Reply(tool_calls=[APPEND, SEARCH]))
    commit_lock = repo_lock(fake_settings.workspace.resolve())
    commit_lock.acquire()  # the write blocks at its commit until the test lets it go
    events: list[ev.BaseEvent] = []
    async with contextlib.aclosing(agent.submit("remember that locker 0.2 holds the keys")) as turn:
        async for event in turn:
            events.append(event)
            if isinstance(event, ev.ToolCallStarted) and event.name == "memory_append":
                assert agent.cancel()
                asyncio.get_running_loop().call_later(0.2, commit_lock.release)

    [finished] = of(events, ev.ToolCallFinished)
    assert finished.name == "memory_append" and finished.error is None
    [written] = of(events, ev.MemoryWritten)
    assert written.commit and json.loads(finished.result)["commit"] == written.commit
    head = commit(fake_settings.workspace)
    assert (
        head.sha == written.commit
        and "locker 0.2" in (fake_settings.workspace / written.path).read_text()
    )
    [stopped] = of(events, ev.ToolCallStopped)
    assert (stopped.call_id, stopped.name) == ("c2", "memory_search")
    assert not of(events, ev.SearchPerformed)
    receipt, end = events[-2:]
    assert receipt == ev.TurnCancelled(
        turn=1,
        stopped_during="tool_calls",
        tools_finished=["memory_append"],
        tools_stopped=["memory_search"],
        written=[written.path],
        commits=[written.commit],
    )
    assert end == ev.TurnFinished(turn=1, reason="cancelled")
    assert len(fake_openai.requests) == 1, "no model call after the cancel"

    answers = {m["tool_call_id"]: m["content"] for m in agent.messages if m["role"] == "tool"}
    assert json.loads(answers["c1"])["commit"] == written.commit
    assert answers["c2"].startswith("Not run: the user cancelled")
    fake_openai.enqueue(Reply(text="Saved it."))
    next_turn = [e async for e in agent.submit("thanks")]
    assert of(next_turn, ev.TurnFinished)[-1].reason == "completed"
    assert not agent.cancel(), "no turn runs now"
    await agent.aclose()


async def test_a_cancel_aborts_the_model_call_under_way(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(fake_settings)
    fake_openai.enqueue(Fault(delay_s=10.0))  # an answer that would take ten seconds
    events: list[ev.BaseEvent] = []
    async with contextlib.aclosing(agent.submit("hello")) as turn:
        async for event in turn:
            events.append(event)
            if isinstance(event, ev.UsageUpdated) and not of(events, ev.TurnCancelled):
                asyncio.get_running_loop().call_later(0.3, agent.cancel)

    assert events[-2:] == [
        ev.TurnCancelled(turn=1, stopped_during="model_call"),
        ev.TurnFinished(turn=1, reason="cancelled"),
    ]
    assert not of(events, ev.AssistantMessage)
    assert [m["role"] for m in agent.messages] == ["user"], "the cut answer is not kept"
    await agent.aclose()


async def test_a_cancel_during_the_flush_before_a_call_ends_the_turn_without_the_call(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(replace(fake_settings, context_window=5_000))
    words = ["the spare keys are in locker 0.2."]
    while agent.request_builder.projected([{"role": "user", "content": " ".join(words)}]) < (
        agent.budget.flush_threshold
    ):
        words.append("the spare keys are in locker 0.2.")
    fake_openai.enqueue(Reply(text="NO_REPLY"))  # the flush: nothing to store
    events: list[ev.BaseEvent] = []
    async with contextlib.aclosing(agent.submit(" ".join(words))) as turn:
        async for event in turn:
            events.append(event)
            if isinstance(event, ev.FlushStarted):
                assert agent.cancel()
    assert of(events, ev.FlushFinished)[0].outcome == "no_reply"
    assert len(fake_openai.requests) == 1  # the flush's; the turn's own call never went
    assert events[-2:] == [
        ev.TurnCancelled(turn=1, stopped_during="memory_lifecycle"),
        ev.TurnFinished(turn=1, reason="cancelled"),
    ]
    await agent.aclose()

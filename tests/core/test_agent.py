"""The agent loop against real litellm talking to a loopback fake OpenAI server: a turn's text,
tool calls, cancellation and the events it reports."""

from __future__ import annotations

import contextlib
from dataclasses import replace

import pytest

from shell import events as ev
from shell.build import build_agent
from shell.config import Settings
from tests.core.agent_helpers import collect, of, started
from tests.fakes.openai_script import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.git_read import commit


async def test_a_turn_streams_text_and_reports_usage(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(fake_settings)
    fake_openai.enqueue(Reply(text="Hello there, friend."))
    events = await collect(agent.submit("hi"))
    assert isinstance(events[0], ev.TurnStarted)
    assert "".join(e.text for e in of(events, ev.TextDelta)) == "Hello there, friend."
    assert len(of(events, ev.TextDelta)) > 1
    assert of(events, ev.AssistantMessage)[0].text == "Hello there, friend."
    usage = of(events, ev.UsageUpdated)[-1]
    assert usage.window == 32_000 and usage.reported_prompt_tokens == 42
    assert usage.prompt_tokens == sum(usage.breakdown.values())
    assert set(usage.breakdown) == {"system", "tools", "messages"}
    assert events[-1] == ev.TurnFinished(turn=1, reason="completed")
    request = fake_openai.requests[-1]
    assert request["stream"] is True and request["messages"][0]["role"] == "system"
    assert {t["function"]["name"] for t in request["tools"]} == {
        "memory_search",
        "memory_get",
        "memory_append",
        "memory_write",
    }
    await agent.aclose()


async def test_several_tool_calls_in_one_response_write_and_commit(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(fake_settings)
    fake_openai.enqueue(
        Reply(
            tool_calls=[
                ("c1", "memory_append", '{"text": "- Deploy window is Friday 14:00"}'),
                ("c2", "memory_get", '{"path": "MEMORY.md"}'),
            ]
        ),
        Reply(text="Saved."),
    )
    events = await collect(agent.submit("remember that our deploy window is Friday 14:00"))
    assert [e.name for e in of(events, ev.ToolCallStarted)] == ["memory_append", "memory_get"]
    assert all(e.error is None for e in of(events, ev.ToolCallFinished))
    [written] = of(events, ev.MemoryWritten)
    assert written.path == "memory/2026-11-30.md" and written.lines_added == 1 and written.commit
    note = (fake_settings.workspace / "memory/2026-11-30.md").read_text()
    assert "Deploy window is Friday 14:00" in note
    head = commit(fake_settings.workspace)
    assert head.sha == written.commit and "memory(tool)" in head.message
    follow_up = fake_openai.requests[-1]["messages"]
    assert [m["tool_call_id"] for m in follow_up if m["role"] == "tool"] == ["c1", "c2"]
    await agent.aclose()


async def test_malformed_tool_arguments_become_a_tool_error(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(fake_settings)
    fake_openai.enqueue(Reply(tool_calls=[("c1", "memory_get", "{not json")]), Reply(text="Sorry."))
    events = await collect(agent.submit("read it"))
    [finished] = of(events, ev.ToolCallFinished)
    assert finished.error and "not valid JSON" in finished.error
    assert events[-1].reason == "completed"  # type: ignore[attr-defined]
    await agent.aclose()


async def test_tool_rounds_are_capped(fake_settings: Settings, fake_openai: FakeOpenAI) -> None:
    agent = await started(replace(fake_settings, max_tool_rounds=2))
    call = Reply(tool_calls=[("c", "memory_get", '{"path": "MEMORY.md"}')])
    fake_openai.enqueue(call, call, call)
    events = await collect(agent.submit("loop"))
    assert len(of(events, ev.ToolCallStarted)) == 2
    assert events[-1].reason == "tool_limit"  # type: ignore[attr-defined]
    await agent.aclose()


async def test_cancel_between_tool_calls_keeps_the_transcript_valid(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(fake_settings)
    fake_openai.enqueue(
        Reply(
            tool_calls=[
                ("c1", "memory_append", '{"text": "- first fact"}'),
                ("c2", "memory_append", '{"text": "- second fact"}'),
            ]
        )
    )
    async with contextlib.aclosing(agent.submit("save two facts")) as stream:
        async for event in stream:
            if isinstance(event, ev.ToolCallFinished):
                break  # the user pressed escape after the first tool ran
    tool_results = {m["tool_call_id"]: m["content"] for m in agent.messages if m["role"] == "tool"}
    assert set(tool_results) == {"c1", "c2"}
    assert tool_results["c2"] == "Not run: the turn was stopped before this call started."
    note = (fake_settings.workspace / "memory/2026-11-30.md").read_text()
    assert "first fact" in note and "second fact" not in note
    # the next turn sends a transcript the provider accepts, and the session kept everything
    fake_openai.enqueue(Reply(text="fine"))
    events = await collect(agent.submit("continue"))
    assert events[-1].reason == "completed"  # type: ignore[attr-defined]
    resumed = build_agent(fake_settings, resume=True)
    assert resumed.session_id == agent.session_id
    assert resumed.messages == agent.messages
    await agent.aclose()


async def test_an_unexpected_error_ends_the_turn_as_an_error(
    fake_settings: Settings, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = await started(fake_settings)

    def broken(*_: object) -> None:
        raise RuntimeError("a bug in the lifecycle")

    monkeypatch.setattr(agent.lifecycle, "gate_inputs", broken)
    seen: list[ev.BaseEvent] = []
    with pytest.raises(RuntimeError, match="a bug in the lifecycle"):
        async for event in agent.submit("hi"):
            seen.append(event)
    assert isinstance(seen[-1], ev.TurnFinished) and seen[-1].reason == "error"
    await agent.aclose()


async def test_an_empty_answer_is_said_not_passed_off_as_one(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(fake_settings)
    fake_openai.enqueue(Reply(text=""))

    events = await collect(agent.submit("say something"))

    assert any("empty answer" in n.message for n in of(events, ev.Notice))
    assert events[-1] == ev.TurnFinished(turn=1, reason="empty")
    await agent.aclose()


async def test_a_search_names_the_call_it_answered(demo_settings: Settings) -> None:
    agent = await started(demo_settings)
    await collect(agent.submit("remember that the staging port is 5433"))
    events = await collect(agent.submit("what is the staging port?"))
    (call,) = of(events, ev.ToolCallStarted)
    (search,) = of(events, ev.SearchPerformed)
    assert call.name == "memory_search" and search.call_id == call.call_id
    assert ev.from_json(ev.to_json(search)) == search  # hits come back as SearchHit
    await agent.aclose()


async def test_remembering_a_fact_again_is_unchanged_not_a_failed_commit(
    demo_settings: Settings,
) -> None:
    agent = await started(demo_settings)
    first = of(
        await collect(agent.submit("remember that the staging port is 5433")), ev.MemoryWritten
    )
    again = of(
        await collect(agent.submit("remember that the staging port is 5433")), ev.MemoryWritten
    )
    assert [w.outcome for w in first] == ["committed"]
    assert [(w.outcome, w.lines_skipped, w.commit, w.commit_error) for w in again] == [
        ("unchanged", 1, None, None)
    ]
    await agent.aclose()

"""The agent loop against real litellm talking to a loopback fake OpenAI server."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import git
import pytest

from shell import events as ev
from shell.agent import Agent
from shell.build import build_agent
from shell.config import Settings
from shell.prompts import SUMMARY_HEADINGS
from tests.fakes.openai_server import OVERFLOW_DIALECTS, FakeOpenAI, Fault, Reply, overflow


async def collect(stream: AsyncIterator[ev.BaseEvent]) -> list[ev.BaseEvent]:
    async with contextlib.aclosing(stream) as events:
        return [event async for event in events]


async def started(settings: Settings) -> Agent:
    agent = build_agent(settings)
    await collect(agent.start())
    return agent


def of(events: list[ev.BaseEvent], kind: type[ev.BaseEvent]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def summary_text(*extra: str) -> str:
    return "\n".join(f"{h}\n- {' '.join(extra) or 'none'}" for h in SUMMARY_HEADINGS)


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
    head = git.Repo(fake_settings.workspace).head.commit
    assert head.hexsha == written.commit and "memory(tool)" in head.message
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
    assert tool_results["c2"] == "Cancelled by the user."
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


@pytest.mark.parametrize("dialect", OVERFLOW_DIALECTS)
async def test_context_overflow_flushes_compacts_and_retries_once(
    fake_settings: Settings, fake_openai: FakeOpenAI, dialect: str
) -> None:
    agent = await started(replace(fake_settings, context_window=16_000))
    for i in range(6):
        fake_openai.enqueue(Reply(text=f"answer {i} " + "words " * 150))
        await collect(agent.submit(f"question {i} " + "filler " * 150))
    fake_openai.reset()
    fake_openai.enqueue(
        *overflow(dialect, window=16_000, requested=16_400),
        Reply(text="NO_REPLY"),  # the flush turn has nothing to add
        Reply(text=summary_text("question 5")),
        Reply(text="answered after compaction"),
    )
    events = await collect(agent.submit("question 6, the last one"))
    kinds = [type(e) for e in events]
    assert kinds.index(ev.FlushStarted) < kinds.index(ev.CompactionStarted)
    [flushed] = of(events, ev.FlushFinished)
    assert flushed.outcome == "no_reply"
    [receipt] = of(events, ev.CompactionFinished)
    assert receipt.trigger == "overflow" and receipt.tokens_after < receipt.tokens_before
    assert of(events, ev.ContextReinjected)[0].sections == ["Session Startup", "Red Lines"]
    assert events[-1].reason == "completed"  # type: ignore[attr-defined]
    assert "Red Lines" in fake_openai.requests[-1]["messages"][0]["content"]
    assert agent.record.compaction_count == 1
    await agent.aclose()


async def test_mid_turn_tool_result_past_both_thresholds_flushes_before_compacting(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    settings = replace(fake_settings, context_window=5_000)  # compact tool schemas
    agent = await started(settings)
    for i in range(3):
        fake_openai.enqueue(Reply(text=f"reply {i}"))
        await collect(agent.submit(f"small talk {i}"))
    big = "\n".join(f"line {n}: the quick brown fox jumps over the lazy dog" for n in range(300))
    (settings.workspace / "memory" / "2026-11-01.md").write_text(big)
    fake_openai.enqueue(
        Reply(tool_calls=[("c1", "memory_get", '{"path": "memory/2026-11-01.md", "lines": 300}')]),
        Reply(tool_calls=[("f1", "memory_append", '{"text": "- read the old note"}')]),  # flush
        Reply(text="NO_REPLY"),
        Reply(text=summary_text("small talk 2")),
        Reply(text="done reading"),
    )
    events = await collect(agent.submit("read the note from november first"))
    kinds = [type(e) for e in events]
    tool_done = kinds.index(ev.ToolCallFinished)
    gate = next(e for e in events[tool_done:] if isinstance(e, ev.FlushGateEvaluated))
    assert gate.flush and gate.projected_tokens >= agent.budget.compaction_threshold
    assert tool_done < kinds.index(ev.FlushStarted) < kinds.index(ev.CompactionStarted)
    [flushed] = of(events, ev.FlushFinished)
    assert flushed.outcome == "written" and flushed.commit
    assert not of(events, ev.TextDelta)[0].text.startswith("NO_REPLY")
    await agent.aclose()


async def test_gate_is_evaluated_before_every_model_call(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(fake_settings)
    fake_openai.enqueue(
        Reply(tool_calls=[("c", "memory_get", '{"path": "MEMORY.md"}')]), Reply(text="ok")
    )
    events = await collect(agent.submit("check"))
    gates = of(events, ev.FlushGateEvaluated)
    assert len(gates) == len(fake_openai.requests) == 2
    assert all(not g.flush and g.summary.startswith("no") for g in gates)
    await agent.aclose()


async def test_the_index_starts_after_the_first_answer_and_watches_edits(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    import asyncio

    agent = await started(replace(fake_settings, watch=True))
    assert agent.recall.drain() == []  # nothing indexes before the first answer
    fake_openai.enqueue(Reply(text="Hello."))
    await collect(agent.submit("hi"))
    stream = agent.background_events()
    first = await asyncio.wait_for(anext(stream), timeout=60)
    while not isinstance(first, ev.IndexSynced):
        first = await asyncio.wait_for(anext(stream), timeout=60)
    assert first.trigger == "session_start"
    await asyncio.wait_for(agent.recall.watching(), 60)
    note = fake_settings.workspace / "memory" / "2026-11-29.md"
    note.write_text("- the on-call rotation changes on Mondays (ticket OPS-77)\n")
    synced = await asyncio.wait_for(anext(stream), timeout=60)
    while not isinstance(synced, ev.IndexSynced):
        synced = await asyncio.wait_for(anext(stream), timeout=60)
    assert synced.trigger == "watch" and synced.files_changed == 1
    hits = agent.recall.searcher.search("OPS-77").hits
    assert hits and hits[0].path == "memory/2026-11-29.md"
    await agent.aclose()


async def test_new_session_gets_recent_notes_as_untrusted_background(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    from shell.prompts import PRELUDE_HEADER

    agent = await started(fake_settings)
    (fake_settings.workspace / "memory" / "2026-11-29.md").write_text("- yesterday: shipped v2\n")
    (fake_settings.workspace / "memory" / "2026-11-30.md").write_text("- today: review PROJ-9\n")
    old = agent.session_id
    events = await collect(agent.submit("/new"))
    assert of(events, ev.SessionStarted)[0].session_id != old
    fake_openai.enqueue(Reply(text="hello"), Reply(text="again"))
    events = await collect(agent.submit("hi"))
    [prelude] = of(events, ev.StartupPreludeInjected)
    assert prelude.files == ["memory/2026-11-30.md", "memory/2026-11-29.md"]
    system = fake_openai.requests[-1]["messages"][0]["content"]
    assert PRELUDE_HEADER in system and "review PROJ-9" in system and "shipped v2" in system
    await collect(agent.submit("more"))
    assert PRELUDE_HEADER not in fake_openai.requests[-1]["messages"][0]["content"]
    assert agent.messages[0] == {"role": "user", "content": "hi"}  # not stored in the transcript
    await agent.aclose()


async def test_three_failed_flushes_exhaust_the_cycle_and_compaction_still_runs(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(replace(fake_settings, max_attempts=1))
    for i in range(3):
        fake_openai.enqueue(Reply(text=f"answer {i}"))
        await collect(agent.submit(f"question {i}"))
    outcomes = []
    for _ in range(3):
        fake_openai.enqueue(Fault(status=500))  # the flush call fails
        events = await collect(agent.flush())
        [finished] = of(events, ev.FlushFinished)
        outcomes.append((finished.outcome, finished.failures))
    assert outcomes == [("failed", 1), ("failed", 2), ("exhausted", 3)]
    assert any("giving up until the next compaction" in n.message for n in of(events, ev.Notice))
    # the cycle counts as flushed now: a compaction goes ahead without another attempt
    fake_openai.enqueue(Reply(text=summary_text("question 2")))
    events = await collect(agent.compact())
    assert not of(events, ev.FlushStarted)
    assert of(events, ev.CompactionStarted)
    await agent.aclose()


async def test_a_listener_that_starts_before_the_session_gets_the_index_events(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    import asyncio

    agent = build_agent(fake_settings)
    stream = agent.background_events()
    first = asyncio.ensure_future(anext(stream))  # the TUI's background worker may win the race
    await asyncio.sleep(0)
    await collect(agent.start())
    fake_openai.enqueue(Reply(text="Hello."))
    await collect(agent.submit("hi"))
    seen = [await asyncio.wait_for(first, timeout=60)]
    while not isinstance(seen[-1], ev.IndexSynced):
        seen.append(await asyncio.wait_for(anext(stream), timeout=60))
    assert seen[-1].trigger == "session_start"
    await agent.aclose()


async def test_without_background_indexing_only_a_search_builds_the_index(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = build_agent(fake_settings, index_in_background=False)  # as `cairn run` does
    await collect(agent.start())
    fake_openai.enqueue(Reply(text="Hello."))
    events = await collect(agent.submit("hi"))
    assert not of(events, ev.IndexSynced) and agent.recall.drain() == []
    assert not (fake_settings.state_dir / "index").exists()

    query = '{"query": "deploy"}'
    fake_openai.enqueue(Reply(tool_calls=[("s1", "memory_search", query)]), Reply(text="Done."))
    events = await collect(agent.submit("what do we know about deploys?"))
    [synced] = of(events, ev.IndexSynced)
    assert synced.trigger == "search"
    assert of(events, ev.SearchPerformed)
    await agent.aclose()


async def test_a_new_session_does_not_carry_the_old_provider_numbers(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(fake_settings)
    fake_openai.enqueue(Reply(text="Hello.", prompt_tokens=321, completion_tokens=12))
    turn = await collect(agent.submit("hi"))
    assert of(turn, ev.UsageUpdated)[-1].reported_prompt_tokens == 321
    fresh = await collect(agent.submit("/new"))
    assert of(fresh, ev.UsageUpdated)[-1].reported_prompt_tokens == 0
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


async def test_flushes_the_model_ignores_count_toward_the_failure_limit(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(fake_settings)
    outcomes = []
    for _ in range(3):
        fake_openai.enqueue(Reply(text="Happy to help with anything else!"))
        events = await collect(agent.submit("/flush"))
        outcomes += [e.outcome for e in of(events, ev.FlushFinished)]
    assert outcomes == ["ignored", "ignored", "exhausted"]
    assert agent.record.cycle.failures == 3
    assert "without memory_append" in (agent.record.cycle.last_error or "")
    await agent.aclose()


async def test_after_quitting_a_sync_stops_at_once_and_is_no_error(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(fake_settings)
    notes = fake_settings.workspace / "memory"
    notes.mkdir(exist_ok=True)
    (notes / "2026-11-28.md").write_text("".join(f"- fact {i}\n" for i in range(200)))
    await agent.aclose()  # as when the app quits with the first build still embedding
    assert agent.recall.sync("watch") == []
    assert agent.recall.drain() == []


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
    fake_settings: Settings, unused_port: int
) -> None:
    settings = replace(fake_settings, api_base=f"http://127.0.0.1:{unused_port}/v1", max_attempts=2)
    agent = await started(settings)

    events = await collect(agent.submit("anyone there?"))

    [error] = of(events, ev.Error)
    assert error.kind == "unavailable" and "2 attempts" in error.message
    [retry] = of(events, ev.ModelRetry)
    assert retry.reason.startswith("connection failed")
    assert events[-1] == ev.TurnFinished(turn=1, reason="error")
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


async def test_what_a_killed_run_left_behind_is_cleaned_up_and_said(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(fake_settings)
    fake_openai.enqueue(Reply(text="noted"))
    await collect(agent.submit("hello"))
    await agent.aclose()
    transcript = next((fake_settings.workspace / ".cairn").rglob(f"{agent.session_id}*.jsonl"))
    with transcript.open("ab") as handle:
        handle.write(b'{"kind": "message", "message": {"role": "assist')  # torn by a kill
    stale = fake_settings.workspace / "memory" / ".2026-11-30.md.1a2b3c4d.tmp"
    stale.write_text("- half a line")
    os.utime(stale, (time.time() - 600, time.time() - 600))

    resumed = build_agent(fake_settings, resume=True)
    events = await collect(resumed.start())

    notices = [n.message for n in of(events, ev.Notice)]
    assert any("temp file(s) of an interrupted write: memory/.2026-11-30.md" in n for n in notices)
    assert any("Skipped 1 torn line(s)" in n for n in notices)
    assert not stale.exists()
    assert resumed.messages == agent.messages
    await resumed.aclose()


async def test_the_start_shows_the_model_loading_and_ends_once_it_is_ready(
    fake_settings: Settings, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shell.model.loader

    monkeypatch.setattr(shell.model.loader, "_litellm", None)  # as in a fresh process
    monkeypatch.setattr(shell.model.loader, "_preloading", False)
    agent = build_agent(fake_settings)

    events = await collect(agent.start())

    loading = [ev.Loading("model", done=False), ev.Loading("model", done=True)]
    assert of(events, ev.Loading) == loading
    assert isinstance(events[1], ev.Loading), "said at once, before the window is resolved"
    assert events[-1] == ev.Loading("model", done=True), "the start ends when the model is ready"
    fake_openai.enqueue(Reply(text="ready"))
    turn = await collect(agent.submit("hi"))
    assert not of(turn, ev.Loading) and of(turn, ev.AssistantMessage)[0].text == "ready"
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

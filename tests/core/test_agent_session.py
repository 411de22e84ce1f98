"""The agent's session around the turns: start-up (model loading, cleanup of a killed run),
new sessions, and the background index that starts after the first answer."""

from __future__ import annotations

import os
import time
from dataclasses import replace

import pytest

from shell import events as ev
from shell.build import build_agent
from shell.config import Settings
from tests.core.agent_helpers import collect, of, started
from tests.fakes.openai_script import Reply
from tests.fakes.openai_server import FakeOpenAI


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


async def test_what_a_killed_run_left_behind_is_cleaned_up_and_said(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(fake_settings)
    fake_openai.enqueue(Reply(text="noted"))
    await collect(agent.submit("hello"))
    await agent.aclose()
    transcript = next((fake_settings.workspace / ".cairn").rglob(f"{agent.session_id}.jsonl"))
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

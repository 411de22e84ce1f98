"""A small context window: calibrated counts, compact tool schemas, a bootstrap sized to the
window, /context, and never sending what exceeds the window (real litellm, loopback server)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from shell import events as ev
from shell.config import Settings
from shell.context.request import COMPACT_TOOLS_BELOW
from shell.lifecycle.window_fit import drop_entry, oldest_turns_dropped
from shell.messages import summary_message
from shell.session.store import SessionStore
from tests.core.agent_helpers import collect, of, started, summary_text
from tests.fakes.openai_script import Reply
from tests.fakes.openai_server import FakeOpenAI


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, str]:
    return {"role": "assistant", "content": text}


async def test_the_providers_count_calibrates_ours_and_the_gate_reads_it(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(replace(fake_settings, context_window=4_000))
    counted = agent.request_builder.count([*agent.messages, user("hello there")])
    fake_openai.enqueue(Reply(text="hi", prompt_tokens=counted // 2))

    events = await collect(agent.submit("hello there"))

    usage = of(events, ev.UsageUpdated)[-1]
    assert usage.calibrated and usage.reported_prompt_tokens == counted // 2
    added = usage.counted_prompt_tokens - counted  # the reply, counted by us
    assert usage.prompt_tokens == counted // 2 + added
    # the gate sees the provider's count: our own alone would be twice as full
    fake_openai.enqueue(Reply(text="ok", prompt_tokens=counted // 2 + added + 10))
    events = await collect(agent.submit("and again"))
    gate = of(events, ev.FlushGateEvaluated)[0]
    assert gate.projected_tokens < agent.request_builder.count(agent.messages[:-1]) * 3 // 4
    await agent.aclose()


async def test_a_server_that_must_be_asked_counts_each_prompt_before_the_call(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    # llama-cpp-python streams no usage: after the first call it is asked before each call, in
    # time for the gate and the meter, and not asked again after (bench.real_server: a story
    # whose quotes its template escapes was projected at 0.7 of its count)
    agent = await started(replace(fake_settings, context_window=4_000))
    counted = agent.request_builder.count([*agent.messages, user("hello there")])
    fake_openai.enqueue(
        Reply(text="hi", streamed_usage=False),
        Reply(text="h", prompt_tokens=counted),  # the count asked after the first call
    )
    await collect(agent.submit("hello there"))
    asked = counted * 3 // 2  # the next prompt counted as no line through the first could say
    fake_openai.reset()
    fake_openai.enqueue(
        Reply(text="h", prompt_tokens=asked), Reply(text="ok", streamed_usage=False)
    )

    events = await collect(agent.submit("and again"))

    probe, call = fake_openai.requests
    assert not probe.get("stream") and probe["max_tokens"] == 1 and call["stream"]
    assert probe["messages"] == call["messages"] and probe["tools"] == call["tools"]
    gate = of(events, ev.FlushGateEvaluated)[0]
    usage = of(events, ev.UsageUpdated)[0]
    assert gate.projected_tokens == usage.prompt_tokens == asked
    await agent.aclose()


OFFSET = 345
"""What SmolLM2's chat template leaves out of our count (the tool schemas), as measured."""


async def test_the_calibration_is_the_models_and_outlives_compaction_new_and_restart(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    settings = replace(fake_settings, context_window=4_000)
    agent = await started(settings)
    assert not agent.usage().calibrated
    for prompt in ("hello there", "tell me more", "and then?", "go on"):
        sent = agent.request_builder.count([*agent.messages, user(prompt)])
        fake_openai.enqueue(Reply(text="sure " * 300, prompt_tokens=sent - OFFSET))
        await collect(agent.submit(prompt))

    def exact(usage: ev.UsageUpdated) -> bool:
        return usage.calibrated and usage.prompt_tokens == usage.counted_prompt_tokens - OFFSET

    assert exact(agent.usage())
    fake_openai.enqueue(Reply(text="NO_REPLY"), Reply(text=summary_text("hello there")))
    events = await collect(agent.submit("/compact"))
    [receipt] = of(events, ev.CompactionFinished)
    assert exact(agent.usage()) and receipt.tokens_after == agent.usage().prompt_tokens
    await collect(agent.submit("/new"))
    assert exact(agent.usage())
    await agent.aclose()

    restarted = await started(settings)  # a new process: only the state folder is shared
    assert exact(restarted.usage())
    other = await started(replace(settings, model="openai/other"))
    assert not other.usage().calibrated
    await restarted.aclose()
    await other.aclose()


async def test_a_report_far_from_our_count_is_not_believed(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(fake_settings)
    fake_openai.enqueue(Reply(text="hi", prompt_tokens=7))  # a placeholder, or cache misses only

    events = await collect(agent.submit("hello"))

    usage = of(events, ev.UsageUpdated)[-1]
    assert not usage.calibrated and usage.prompt_tokens == usage.counted_prompt_tokens
    await agent.aclose()


async def test_small_windows_get_compact_tool_schemas(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    sizes = {}
    for window in (COMPACT_TOOLS_BELOW - 1, COMPACT_TOOLS_BELOW):
        agent = await started(replace(fake_settings, context_window=window))
        await collect(agent.submit("hi"))
        tools = fake_openai.requests[-1]["tools"]
        search = next(t["function"] for t in tools if t["function"]["name"] == "memory_search")
        sizes[window] = (of_usage := agent.usage()).breakdown["tools"]
        assert of_usage.window == window
        if window < COMPACT_TOOLS_BELOW:
            assert "nothingRelevant" not in search["description"]
            assert search["parameters"]["properties"]["query"] == {"type": "string"}
        else:
            assert "nothingRelevant" in search["description"]
        await agent.aclose()
    assert sizes[COMPACT_TOOLS_BELOW - 1] < sizes[COMPACT_TOOLS_BELOW] / 2


async def test_a_compact_schema_still_validates_against_the_full_one(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(replace(fake_settings, context_window=2_048))
    fake_openai.enqueue(
        Reply(tool_calls=[("c1", "memory_get", '{"path": "MEMORY.md", "lines": 99999}')]),
        Reply(text="ok"),
    )
    events = await collect(agent.submit("read memory"))
    [done] = of(events, ev.ToolCallFinished)
    assert done.error and "lines" in done.error
    await agent.aclose()


async def test_the_bootstrap_is_sized_to_the_window_and_context_shows_the_cut(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    settings = replace(fake_settings, context_window=2_048)
    agent = await started(settings)
    memory = "# Memory\n" + "".join(f"- fact number {n} about the project\n" for n in range(900))
    (settings.workspace / "MEMORY.md").write_text(memory)

    events = await collect(agent.submit("hi"))

    [cut] = [e for e in of(events, ev.BootstrapTruncated) if e.file == "MEMORY.md"] or [None]
    assert cut is None  # announced at start only; the report below shows it
    first = of(events, ev.UsageUpdated)[0]
    assert first.prompt_tokens < settings.context_window * 3 // 4
    [report] = await collect(agent.submit("/context"))
    assert isinstance(report, ev.ContextReport)
    assert report.compact_tools and report.bootstrap_total_budget == 2_048
    assert report.bootstrap_cut["MEMORY.md"] == len(memory.rstrip())
    assert report.bootstrap_chars["MEMORY.md"] <= report.bootstrap_file_budget
    assert sum(report.bootstrap_chars.values()) <= report.bootstrap_total_budget
    await agent.aclose()


async def test_a_prompt_over_the_window_by_itself_is_not_sent(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(replace(fake_settings, context_window=2_048))
    huge = " ".join(f"word{n}" for n in range(3_000))

    events = await collect(agent.submit(huge))

    [error] = of(events, ev.Error)
    assert error.kind == "context_overflow" and error.message.startswith("Not sent")
    assert events[-1] == ev.TurnFinished(turn=1, reason="error")
    assert not fake_openai.requests  # neither the turn nor a flush or compaction call
    fake_openai.enqueue(Reply(text="fine"))
    events = await collect(agent.submit("a short one"))
    assert events[-1] == ev.TurnFinished(turn=2, reason="completed")
    await agent.aclose()


def test_the_oldest_whole_turns_are_dropped_first_and_the_summary_kept() -> None:
    summary = summary_message("## Decisions\n- tabs")
    messages = [summary, user("one"), assistant("1"), user("two"), assistant("2"), user("three")]

    kept = oldest_turns_dropped(messages, lambda kept: len(kept) <= 4)

    assert kept == [summary, user("two"), assistant("2"), user("three")]
    assert oldest_turns_dropped(messages, lambda kept: False) == [user("three")]
    assert oldest_turns_dropped(messages, lambda kept: True) == [summary, *messages[3:]]


def test_a_drop_entry_rebuilds_the_live_list(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, lambda: datetime(2026, 12, 1, tzinfo=UTC))
    session = store.create("openai/fake").session_id
    summary = summary_message("## Decisions\n- tabs")
    store.append(session, {"kind": "compaction", "summary": "## Decisions\n- tabs", "kept": 0})
    for message in [user("one"), assistant("1"), user("two"), assistant("2")]:
        store.append_message(session, message)
    kept = [summary, user("two"), assistant("2")]

    store.append(session, drop_entry(kept))

    assert store.messages(session) == kept


async def test_the_flush_sees_every_user_message_and_the_gist_of_long_replies(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(replace(fake_settings, context_window=2_048))
    story = " ".join(f"The keeper climbed stair {n} of the lighthouse." for n in range(120))
    fake_openai.enqueue(Reply(text="Hello Ada."), Reply(text=story))
    await collect(agent.submit("My name is Ada and I live in Tromsø."))
    await collect(agent.submit("Tell me a long story."))
    fake_openai.reset()
    fake_openai.enqueue(
        Reply(tool_calls=[("f1", "memory_append", '{"text": "- Ada lives in Tromsø"}')]),
        Reply(text="NO_REPLY"),
    )

    events = await collect(agent.submit("Thanks!"))

    [flushed] = of(events, ev.FlushFinished)
    assert flushed.outcome == "written"
    [append] = [t["function"] for t in fake_openai.requests[0]["tools"]]
    assert append["name"] == "memory_append"
    assert append["parameters"]["properties"]["text"] == {"type": "string"}, "compact, as turns"
    sent = fake_openai.requests[0]["messages"]
    contents = [m.get("content") or "" for m in sent]
    assert "My name is Ada and I live in Tromsø." in contents
    [shortened] = [c for c in contents if c.startswith("The keeper climbed")]
    assert len(shortened) < len(story) // 10
    assert agent.request_builder.count(sent[1:]) < 2_048
    await agent.aclose()

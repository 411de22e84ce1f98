"""A session's view log (`shell.session.views`): what its streams showed, recorded by the core
for every consumer, read back on resume, torn lines skipped, its size bounded."""

from __future__ import annotations

import io
from pathlib import Path

from shell import events as ev
from shell.build import build_agent
from shell.config import Settings
from shell.headless.run import run_headless
from shell.session.views import CUT_NOTICE, ViewLog
from tests.core.agent_helpers import collect, of, started

TOLD = "remember that our deploy window is Friday 14:00"


def compaction(count: int) -> ev.CompactionFinished:
    return ev.CompactionFinished("manual", 3000, 1000, 2, 4, 12.0, "- a summary", count)


def test_the_log_keeps_the_view_and_leaves_out_passing_state(tmp_path: Path) -> None:
    log = ViewLog(tmp_path)
    shown = [
        ev.TurnStarted("s", 1, "hi"),
        ev.AssistantMessage("hello"),
        ev.TurnFinished(1, "completed"),
    ]
    passing = [
        ev.TextDelta("hel"),
        ev.Loading("model", done=False),
        ev.IndexSyncProgress(1, 2, 3, 3),
    ]
    for event in [shown[0], *passing, *shown[1:]]:
        log.append("s", event)
    assert log.read("s") == shown
    assert log.read("other") == []
    assert log.path("s").stat().st_mode & 0o777 == 0o600


def test_a_torn_line_is_skipped_and_does_not_swallow_the_next(tmp_path: Path) -> None:
    log = ViewLog(tmp_path)
    log.append("s", ev.Notice("before"))
    with log.path("s").open("ab") as handle:
        handle.write(b'{"type": "notice", "mess')  # a crash mid-write
    log.append("s", ev.Notice("after"))
    assert log.read("s") == [ev.Notice("before"), ev.Notice("after")]


def test_a_big_log_keeps_its_newer_turns_and_the_compaction_count(tmp_path: Path) -> None:
    log = ViewLog(tmp_path, max_bytes=4000)
    for turn in range(1, 60):
        log.append("s", ev.TurnStarted("s", turn, f"prompt number {turn}"))
        log.append("s", ev.AssistantMessage("an answer of some length " * 2))
        if turn == 5:
            log.append("s", compaction(1))
        log.append("s", ev.TurnFinished(turn, "completed"))

    assert log.path("s").stat().st_size <= 4000
    events = log.read("s")
    assert events[:2] == [ev.Notice(CUT_NOTICE), compaction(1)]
    assert isinstance(events[2], ev.TurnStarted) and events[2].turn > 5
    assert events[-1] == ev.TurnFinished(59, "completed")


async def test_every_stream_is_recorded_once_and_given_back_on_resume(
    demo_settings: Settings,
) -> None:
    agent = await started(demo_settings)
    assert agent.history() == []  # a new session has shown nothing before
    turn = await collect(agent.submit(TOLD))
    dream = await collect(agent.submit("/dream"))  # `/dream` runs `dream`: recorded once
    await agent.aclose()

    resumed = build_agent(demo_settings, resume=True)
    history = resumed.history()
    assert of(history, ev.TurnStarted) == of(turn, ev.TurnStarted)
    assert of(history, ev.ToolCallFinished) == of(turn, ev.ToolCallFinished)
    assert of(history, ev.MemoryWritten) == of(turn + dream, ev.MemoryWritten)
    assert len(of(history, ev.DreamSweepStarted)) == len(of(dream, ev.DreamSweepStarted)) == 1
    assert not of(history, ev.TextDelta) and not of(history, ev.UsageUpdated)
    assert isinstance(history[0], ev.SessionStarted) and not history[0].resumed
    await resumed.aclose()


async def test_a_headless_run_leaves_the_same_log(demo_settings: Settings) -> None:
    out = io.StringIO()
    await run_headless(demo_settings, [TOLD, "/compact"], out=out)
    printed = [ev.from_json(line) for line in out.getvalue().splitlines()]

    history = build_agent(demo_settings, resume=True).history()
    assert of(history, ev.TurnStarted) == of(printed, ev.TurnStarted)
    assert of(history, ev.FlushGateEvaluated) == of(printed, ev.FlushGateEvaluated)
    assert of(history, ev.CompactionFinished) == of(printed, ev.CompactionFinished)

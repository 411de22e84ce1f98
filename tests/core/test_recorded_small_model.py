"""What Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, llama-cpp-python, the GGUF's own template, a
4,096-token window) really wrote for Cairn's real first request, replayed: each reply read as
the calls it holds or left prose (tests/fakes/recorded/qwen2.5-coder-1.5b.jsonl says which and
why), and the writes among them run through the agent against the loopback server, landing in
today's note and a commit whatever path the model made up."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shell import events as ev
from shell.config import Settings
from shell.memory.paths import daily_note
from shell.model.textcalls import calls_in_text
from tests.core.agent_helpers import collect, memory_tools_offered, of, started
from tests.fakes.openai_script import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.git_read import blob, commit

RECORDED = Path(__file__).parents[1] / "fakes" / "recorded" / "qwen2.5-coder-1.5b.jsonl"
OFFERED = memory_tools_offered()


def recorded() -> list[dict[str, Any]]:
    return [json.loads(line) for line in RECORDED.read_text(encoding="utf-8").splitlines()]


def ids(records: list[dict[str, Any]]) -> list[str]:
    return [f"{n}-{r['expect']['note'][:40]}" for n, r in enumerate(records)]


@pytest.mark.parametrize("record", recorded(), ids=ids(recorded()))
def test_each_recorded_reply_reads_as_its_calls_or_stays_prose(record: dict[str, Any]) -> None:
    expect = record["expect"]
    found = calls_in_text(record["content"], OFFERED, lambda n: f"t{n}")
    if expect["calls"] is None:
        assert found is None
        return
    assert found is not None
    assert [[c.name, json.loads(c.arguments)] for c in found.calls] == expect["calls"]
    assert found.prose == expect.get("prose", "")
    assert (found.dropped > 0) is expect.get("dropped", False)


WRITES = [r for r in recorded() if r["expect"].get("writes_to")]


@pytest.mark.parametrize("record", WRITES, ids=ids(WRITES))
async def test_each_recorded_write_lands_in_todays_note_and_a_commit(
    fake_settings: Settings, fake_openai: FakeOpenAI, record: dict[str, Any]
) -> None:
    agent = await started(fake_settings)
    fake_openai.enqueue(Reply(text=record["content"], split=11), Reply(text="Saved."))

    events = await collect(agent.submit(record["prompt"]))

    [read] = of(events, ev.TextCallsRead)
    assert read.names == ["memory_append"]
    assert (read.dropped_chars > 0) is record["expect"].get("dropped", False)  # the recital
    [written] = of(events, ev.MemoryWritten)
    target = record["expect"]["writes_to"]  # "today": the model's path had the placeholder
    note = daily_note(fake_settings.today()) if target == "today" else target
    assert written.outcome == "committed" and written.path == note
    assert commit(agent.workspace, written.commit).files == [note]
    text = record["expect"]["calls"][0][1]["text"]
    assert text.encode() in blob(agent.workspace, "HEAD", note)
    assert [m.text for m in of(events, ev.AssistantMessage)] == ["Saved."]
    assert "# Tools" not in json.dumps(fake_openai.requests[1]["messages"][-2])
    await agent.aclose()

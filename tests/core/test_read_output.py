"""A result cut to fit the window names a tool the model is offered: read_output, which reads
the rest. The real agent, litellm and the loopback model, with no project folder (so no
read_file) at a 5,000-token window."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from shell import events as ev
from shell.config import Settings, ToolSettings
from tests.core.agent_helpers import collect, of, started
from tests.fakes.openai_script import Reply
from tests.fakes.openai_server import FakeOpenAI

NOTE = "".join(f"- garden fact {n}: the tomatoes in bed {n} want water\n" for n in range(1, 201))
MARKER = re.compile(r'read_output\(ref="(?P<ref>output:[^"]+)", from=(?P<from>\d+)\)')


def offered(request: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in request.get("tools") or []}


def tool_message(request: dict[str, Any], call_id: str) -> str:
    return next(
        str(m["content"])
        for m in request["messages"]
        if m["role"] == "tool" and m["tool_call_id"] == call_id
    )


async def test_a_cut_memory_get_names_read_output_which_is_offered_and_reads_on(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(replace(fake_settings, context_window=5_000))
    (fake_settings.workspace / "memory" / "garden.md").write_text(NOTE, encoding="utf-8")
    assert "read_file" not in {tool.name for tool in agent.toolbox}
    get = json.dumps({"path": "memory/garden.md", "lines": 200})
    fake_openai.enqueue(Reply(tool_calls=[("g1", "memory_get", get)]), Reply(text="read it"))

    await collect(agent.submit("what is in the garden note?"))

    assert "read_output" not in offered(fake_openai.requests[0])  # no cut yet: not offered
    after_cut = fake_openai.requests[-1]
    cut = json.loads(tool_message(after_cut, "g1"))["text"]
    marker = MARKER.search(cut)
    assert marker is not None, cut
    assert "read_output" in offered(after_cut)
    first_cut = int(marker["from"])
    assert f"garden fact {first_cut - 1}:" in cut and f"garden fact {first_cut}:" not in cut

    read_on = json.dumps({"ref": marker["ref"], "from": first_cut, "lines": 5})
    fake_openai.enqueue(Reply(tool_calls=[("r1", "read_output", read_on)]), Reply(text="more"))
    events = await collect(agent.submit("read on"))

    [finished] = [e for e in of(events, ev.ToolCallFinished) if e.name == "read_output"]
    assert finished.error is None
    window = json.loads(finished.result)
    wanted = NOTE.splitlines()[first_cut - 1 : first_cut + 4]
    assert window["text"].splitlines() == wanted
    assert window["nextFrom"] == first_cut + 5 and window["totalLines"] == 200
    await agent.aclose()


async def test_a_command_that_cut_its_own_output_offers_read_output(
    fake_settings: Settings, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    """At 100,000 tokens the result fits its share, but run_command kept only the head and
    tail of 200,000 bytes: its note names read_output, so read_output is offered next."""
    project = tmp_path / "project"
    project.mkdir()
    settings = replace(
        fake_settings,
        context_window=100_000,
        project=project,
        tools=ToolSettings(approval="yes"),
    )
    agent = await started(settings)
    command = json.dumps({"command": "yes 0123456789abcdef | head -c 200000"})
    fake_openai.enqueue(Reply(tool_calls=[("c1", "run_command", command)]), Reply(text="ran"))

    await collect(agent.submit("print a lot"))

    assert "read_output" not in offered(fake_openai.requests[0])
    output = json.loads(tool_message(fake_openai.requests[-1], "c1"))["output"]
    assert 'read_output(ref="output:c1")' in output and "[…" not in output  # not fitted again
    assert "read_output" in offered(fake_openai.requests[-1])
    await agent.aclose()

"""Allow rules through the whole agent, headless: a rule runs what it names and nothing else."""

from __future__ import annotations

import contextlib
import json
from dataclasses import replace
from pathlib import Path

from shell.build import build_agent
from shell.config import Settings, ToolSettings
from shell.events import ApprovalDecided, CommandFinished, Event
from tests.fakes.openai_script import Reply
from tests.fakes.openai_server import FakeOpenAI


async def test_make_star_runs_make_and_not_a_function_named_make(
    fake_settings: Settings, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "Makefile").write_text("test:\n\ttouch RAN\n")
    tools = ToolSettings(allow=("run_command:make*",))
    settings = replace(fake_settings, project=project, tools=tools)
    agent = build_agent(settings, index_in_background=False, interactive=False)
    attack = json.dumps({"command": "make() (touch PWNED) && make"})
    simple = json.dumps({"command": "make test"})
    fake_openai.enqueue(
        Reply(tool_calls=[("call_1", "run_command", attack), ("call_2", "run_command", simple)]),
        Reply(text="done"),
    )
    seen: list[Event] = []
    async with contextlib.aclosing(agent.submit("run the tests")) as events:
        async for event in events:
            seen.append(event)
    await agent.aclose()
    decided = {e.call_id: e for e in seen if isinstance(e, ApprovalDecided)}
    assert not decided["call_1"].allowed and decided["call_1"].by == "headless"
    assert "it has a function definition" in decided["call_1"].reason
    assert decided["call_2"].allowed and decided["call_2"].by == "rule"
    assert not (project / "PWNED").exists()
    assert (project / "RAN").exists()
    [finished] = [e for e in seen if isinstance(e, CommandFinished)]
    assert finished.call_id == "call_2" and finished.exit_code == 0

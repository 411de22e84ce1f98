"""run_command through the whole agent: esc (a cancel) kills a command under way."""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import replace
from pathlib import Path

from shell.build import build_agent
from shell.config import Settings, ToolSettings
from shell.events import CommandFinished, CommandOutput, Event, TurnCancelled, TurnFinished
from tests.fakes.openai_script import Reply
from tests.fakes.openai_server import FakeOpenAI


async def test_a_cancel_kills_the_running_command_and_ends_the_turn(
    fake_settings: Settings, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    settings = replace(fake_settings, project=project, tools=ToolSettings(approval="yes"))
    agent = build_agent(settings, index_in_background=False, interactive=False)
    command = json.dumps({"command": "echo started; sleep 300"})
    fake_openai.enqueue(Reply(tool_calls=[("c1", "run_command", command)]), Reply(text="x"))
    seen: list[Event] = []
    async with contextlib.aclosing(agent.submit("run it")) as events:
        async for event in events:
            seen.append(event)
            if isinstance(event, CommandOutput) and "started" in event.text:
                asyncio.get_running_loop().call_soon(agent.cancel)
    await agent.aclose()
    [finished] = [e for e in seen if isinstance(e, CommandFinished)]
    assert finished.ended == "cancelled" and finished.exit_code != 0
    [receipt] = [e for e in seen if isinstance(e, TurnCancelled)]
    assert receipt.stopped_during == "tool_calls" and receipt.tools_finished == ["run_command"]
    assert seen[-1] == TurnFinished(turn=1, reason="cancelled")
    assert len(fake_openai.requests) == 1  # the model was not asked again

"""MCP tools through the whole agent: a real litellm model (the loopback fake) calls the tools of
real servers (mcp-server-time, and the fake that dies mid-call), approved by the same policy."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from shell.agent import Agent
from shell.build import build_agent
from shell.config import McpServerSettings, Settings, ToolSettings
from shell.events import (
    ApprovalDecided,
    ApprovalRequested,
    AssistantMessage,
    Error,
    Event,
    McpServerChanged,
    Notice,
    ToolCallFinished,
    TurnFinished,
)
from shell.tools.toolbox import CallContext, Tool, ToolResult
from tests.fakes.openai_script import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.schema_host import schema_host

BIN = Path(sys.executable).parent
TIME = McpServerSettings(
    "time", command=str(BIN / "mcp-server-time"), args=("--local-timezone", "UTC")
)
FAKE_SERVER = str(Path(__file__).parents[1] / "fakes" / "mcp_server.py")
FAKE = McpServerSettings("fake", command=sys.executable, args=(FAKE_SERVER,))


async def run(agent: Agent, text: str) -> list[Event]:
    seen: list[Event] = []
    try:
        seen += [event async for event in agent.start()]
        async with contextlib.aclosing(agent.submit(text)) as events:
            seen += [event async for event in events]
    finally:
        await agent.aclose()
    return seen


def headless(
    settings: Settings, *, mcp: tuple[McpServerSettings, ...] = (TIME, FAKE), **tools: object
) -> Agent:
    return build_agent(
        replace(settings, mcp=mcp, tools=ToolSettings(**tools)),  # type: ignore[arg-type]
        index_in_background=False,
        interactive=False,
    )


def offered(request: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in request.get("tools", [])}


def call(name: str, arguments: dict[str, str]) -> Reply:
    return Reply(tool_calls=[("call_1", name, json.dumps(arguments))])


async def test_an_mcp_tool_is_denied_headless_without_a_rule(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    fake_openai.enqueue(call("time__get_current_time", {"timezone": "UTC"}), Reply(text="ok"))
    events = await run(headless(fake_settings), "what time is it?")
    [decided] = [e for e in events if isinstance(e, ApprovalDecided)]
    assert decided.by == "headless" and not decided.allowed
    [finished] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert finished.error and "--allow 'time__get_current_time'" in finished.error
    tool_message = fake_openai.requests[-1]["messages"][-1]
    assert tool_message["role"] == "tool" and "needs the user's approval" in tool_message["content"]


async def test_an_allowed_mcp_tool_runs_and_its_result_reaches_the_model(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    fake_openai.enqueue(call("time__get_current_time", {"timezone": "UTC"}), Reply(text="ok"))
    events = await run(headless(fake_settings, allow=("time__*",)), "what time is it?")
    ready = [e.server.name for e in events if isinstance(e, McpServerChanged)]
    assert sorted(ready) == ["fake", "time"]
    [decided] = [e for e in events if isinstance(e, ApprovalDecided)]
    assert decided.by == "rule" and decided.allowed
    tool_message = fake_openai.requests[-1]["messages"][-1]
    assert '"timezone": "UTC"' in tool_message["content"]
    assert "datetime" in tool_message["content"]


async def test_a_server_that_dies_mid_call_is_a_notice_and_the_turn_completes(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    fake_openai.enqueue(call("fake__die", {}), Reply(text="it went away"))
    events = await run(headless(fake_settings, approval="yes"), "call die")
    failed = [e for e in events if isinstance(e, McpServerChanged) and e.server.state == "failed"]
    assert [e.server.name for e in failed] == ["fake"]
    [finished] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert finished.error and "fake" in finished.error
    assert events[-1] == TurnFinished(turn=1, reason="completed")
    offered = {tool["function"]["name"] for tool in fake_openai.requests[-1]["tools"]}
    assert "fake__echo" not in offered and "time__get_current_time" in offered


async def test_a_server_past_its_call_timeout_is_withdrawn_with_one_notice(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    slow = replace(FAKE, call_timeout=0.5)
    hangs = [(f"call_{n}", "fake__hang", "{}") for n in (1, 2)]
    fake_openai.enqueue(Reply(tool_calls=hangs), Reply(text="it is stuck"))
    events = await run(headless(fake_settings, mcp=(TIME, slow), approval="yes"), "call hang")
    failed = [e for e in events if isinstance(e, McpServerChanged) and e.server.state == "failed"]
    assert [(e.server.name, e.server.detail) for e in failed] == [
        ("fake", "did not answer a call within 0.5 s")
    ]
    first, second = [e for e in events if isinstance(e, ToolCallFinished)]
    assert first.error == "MCP server fake did not answer within 0.5 s"
    assert second.error and "no tool 'fake__hang'" in second.error
    assert events[-1] == TurnFinished(turn=1, reason="completed")
    before, after = offered(fake_openai.requests[0]), offered(fake_openai.requests[-1])
    assert "fake__hang" in before and not any(name.startswith("fake__") for name in after)
    assert "time__get_current_time" in after


async def test_hostile_schemas_are_refused_at_start_and_the_turns_go_on(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    with schema_host() as (url, hits):
        remote = McpServerSettings(
            "remote", command=sys.executable, args=(FAKE_SERVER, "remote-ref", f"{url}/key.json")
        )
        huge = McpServerSettings("huge", command=sys.executable, args=(FAKE_SERVER, "huge"))
        fake_openai.enqueue(
            call("remote__lookup", {"key": "k"}), Reply(text="no such tool"), Reply(text="hi")
        )
        agent = headless(fake_settings, mcp=(remote, huge), approval="yes")
        seen: list[Event] = [event async for event in agent.start()]
        try:
            for prompt in ("look k up", "hello"):
                async with contextlib.aclosing(agent.submit(prompt)) as events:
                    seen += [event async for event in events]
        finally:
            await agent.aclose()
    assert hits == []
    refused = [e.message for e in seen if isinstance(e, Notice) and "not offered" in e.message]
    assert refused == [
        f"MCP server remote: 1 tool not offered. remote__lookup (refers to {url}/key.json): an "
        "input schema that refers outside itself, which Cairn does not fetch.",
        refused[1],
    ]
    assert refused[1].startswith("MCP server huge: 1 tool not offered. huge__lookup (")
    assert refused[1].endswith(
        " tokens): over the 4,000 tokens one tool's schema may take (an eighth of the "
        "32,000-token window)."
    )
    tokens = int(refused[1].split("huge__lookup (")[1].split(" tokens")[0].replace(",", ""))
    assert tokens > 200_000
    for request in fake_openai.requests:
        assert {"remote__lookup", "huge__lookup"}.isdisjoint(offered(request))
        assert {"remote__echo", "huge__echo"} <= offered(request)
    [finished] = [e for e in seen if isinstance(e, ToolCallFinished)]
    assert finished.error and "no tool 'remote__lookup'" in finished.error
    ends = [e for e in seen if isinstance(e, TurnFinished)]
    assert [e.reason for e in ends] == ["completed", "completed"]


async def test_a_prompt_over_the_window_is_refused_naming_what_is_big(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    async def run_nothing(arguments: dict[str, Any], context: CallContext) -> ToolResult:
        return ToolResult("")

    # What the offer's caps now keep out of the toolbox (tested apart): the refusal must
    # still say that the tools are what is big, not the two-letter message.
    fat = Tool("fat__tool", "a field " * 800, {"type": "object"}, run_nothing, source="mcp:fat")
    small = replace(fake_settings, context_window=2_048)
    agent = headless(small, mcp=())
    agent.toolbox.add([fat])
    [error] = [e for e in await run(agent, "hi") if isinstance(e, Error)]
    assert error.kind == "context_overflow" and error.message.startswith("Not sent")
    assert "The tools' schemas take the most" in error.message
    assert "Shorten the message" not in error.message
    tools = error.message.split("the tools' schemas ")[1].split(", the last turn")[0]
    assert int(tools.replace(",", "")) > 1_600

    huge = " ".join(f"word{n}" for n in range(3_000))
    [error] = [e for e in await run(headless(small, mcp=()), huge) if isinstance(e, Error)]
    assert "Shorten the message" in error.message and "tools' schemas take the most" not in (
        error.message
    )
    assert not fake_openai.requests


async def test_the_demo_brain_calls_an_mcp_tool_after_approval(demo_settings: Settings) -> None:
    agent = build_agent(replace(demo_settings, mcp=(TIME,)), index_in_background=False)
    seen: list[Event] = [event async for event in agent.start()]
    async with contextlib.aclosing(
        agent.submit("call time__get_current_time with timezone=UTC")
    ) as events:
        async for event in events:
            seen.append(event)
            if isinstance(event, ApprovalRequested):
                assert event.detail and '"timezone": "UTC"' in event.detail
                asyncio.get_running_loop().call_soon(
                    agent.answer_approval, event.call_id, "allow_once", ""
                )
    await agent.aclose()
    [decided] = [e for e in seen if isinstance(e, ApprovalDecided)]
    assert decided.by == "user" and decided.allowed
    said = [e.text for e in seen if isinstance(e, AssistantMessage)][-1]
    assert said.startswith("time__get_current_time returned:") and "datetime" in said


async def test_mcp_schemas_that_crowd_a_small_window_are_said_and_capped(
    fake_settings: Settings, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    await asyncio.to_thread(subprocess.run, ["git", "init", "-q", str(repo)], check=True)
    git = McpServerSettings(
        "git", command=str(BIN / "mcp-server-git"), args=("--repository", str(repo))
    )
    warnings: dict[int, list[str]] = {}
    for window in (2_048, 32_000):
        settings = replace(fake_settings, mcp=(TIME, git), context_window=window)
        agent = build_agent(settings, index_in_background=False, interactive=False)
        try:
            started = [event async for event in agent.start()]
        finally:
            await agent.aclose()
        warnings[window] = [
            e.message for e in started if isinstance(e, Notice) and "MCP" in e.message
        ]
    refused, said = warnings[2_048]
    assert refused.startswith("MCP server git: ") and " tools not offered. git__" in refused
    assert refused.endswith("may take together (half of the 2,048-token window).")
    assert "of the 2,048-token window" in said and "enabled = false" in said
    tokens = int(said.split(" take ")[1].split(" tokens")[0].replace(",", ""))
    assert 2_048 // 4 <= tokens <= 2_048 // 2
    assert warnings[32_000] == []

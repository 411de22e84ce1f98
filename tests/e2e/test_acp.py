"""`cairn acp` driven by the ACP SDK's own client (`acp.stdio.spawn_agent_process`), headless,
on the demo brain: prompts in, the reply streamed, tool calls and memory shown, approvals
answered by the client."""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, text_block
from acp.client.connection import ClientSideConnection
from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse
from acp.stdio import spawn_agent_process

from tests.e2e.mcp_helpers import git, seeded
from tests.e2e.test_cli import CAIRN, cairn_env

HELLO = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}


class Person:
    """The client's side: what it was shown, and how it answers each approval."""

    def __init__(self, answers: list[str]) -> None:
        self.conn: Any = None
        self.updates: list[Any] = []
        self.asked: list[tuple[Any, list[str]]] = []
        self.answers = answers

    def on_connect(self, conn: Any) -> None:
        pass

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append(update)

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **_: Any
    ) -> RequestPermissionResponse:
        self.asked.append((tool_call, [option.option_id for option in options]))
        answer = self.answers.pop(0)
        if answer == "cancel the turn":  # the person presses stop while asked
            await self.conn.cancel(session_id=session_id)
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        if answer == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=answer)
        )

    def said(self) -> str:
        chunks = [u.content.text for u in self.updates if u.session_update == "agent_message_chunk"]
        return "".join(chunks)

    def thoughts(self) -> list[str]:
        return [u.content.text for u in self.updates if u.session_update == "agent_thought_chunk"]

    def calls(self) -> list[tuple[str, str | None]]:
        return [
            (u.session_update, getattr(u, "title", None) or getattr(u, "status", None))
            for u in self.updates
            if u.session_update in ("tool_call", "tool_call_update")
        ]


@contextlib.asynccontextmanager
async def driving(
    home: Path, person: Person, *options: str, embedder: str = "hash"
) -> AsyncIterator[ClientSideConnection]:
    ws = home / "ws" if (home / "ws").exists() else seeded(home)
    with (home / "acp-stderr.log").open("w") as log:
        async with spawn_agent_process(
            person,
            str(CAIRN),
            "acp",
            "--demo",
            "--workspace",
            str(ws),
            *options,
            env=cairn_env(home, CAIRN_EMBEDDER=embedder),
            transport_kwargs={"stderr": log.fileno(), "shutdown_timeout": 60},
        ) as (conn, _process):
            person.conn = conn
            hello = await conn.initialize(protocol_version=PROTOCOL_VERSION)
            assert hello.agent_info is not None and hello.agent_info.name == "cairn"
            yield conn


def project(home: Path) -> Path:
    folder = home / "proj"
    (folder / "calc").mkdir(parents=True)
    (folder / "calc" / "ops.py").write_text("def sub(a, b):\n    return a - b\n")
    return folder


async def test_a_prompt_streams_the_reply_its_tool_calls_and_what_memory_did(
    tmp_path: Path,
) -> None:
    person = Person([])
    async with driving(tmp_path, person) as conn:
        session = await conn.new_session(cwd=str(project(tmp_path)), mcp_servers=[])
        done = await conn.prompt(
            session_id=session.session_id,
            prompt=[text_block("remember that our deploy window is Friday 14:00")],
        )
        assert done.stop_reason == "end_turn"
        sha = git(tmp_path / "ws", "rev-parse", "HEAD").strip()
        assert person.calls() == [("tool_call", "memory_append"), ("tool_call_update", "completed")]
        assert any(t.startswith("memory: memory/") and sha[:7] in t for t in person.thoughts())
        assert sha[:7] in person.said()
        [offered] = [u for u in person.updates if u.session_update == "available_commands_update"]
        names = [command.name for command in offered.available_commands]
        assert {"compact", "flush", "new", "context"} <= set(names) and "review" not in names
        person.updates.clear()
        asked = await conn.prompt(
            session_id=session.session_id, prompt=[text_block("when is our deploy window?")]
        )
        assert asked.stop_reason == "end_turn"
        assert "Friday 14:00" in person.said() and "Source: memory/" in person.said()
        assert any(
            t.startswith("memory search 'when is our deploy window?': 1 hit")
            for t in person.thoughts()
        )
    message = git(tmp_path / "ws", "log", "-1", "--format=%B", sha)
    assert message.startswith("memory(tool): append 1 line to memory/")
    assert f"session {session.session_id} turn 1" in message
    assert person.asked == []  # a memory write is never asked: it is committed and revertable


@pytest.mark.parametrize(
    ("answer", "after"),
    [
        ("allow_once", "return a + b"),
        ("allow_session", "return a + b"),
        ("deny", "return a - b"),
        ("cancelled", "return a - b"),
    ],
)
async def test_an_edit_waits_for_the_clients_answer(
    tmp_path: Path, answer: str, after: str
) -> None:
    person = Person([answer])
    folder = project(tmp_path)
    async with driving(tmp_path, person) as conn:
        session = await conn.new_session(cwd=str(folder), mcp_servers=[])
        done = await conn.prompt(
            session_id=session.session_id,
            prompt=[text_block('replace "a - b" with "a + b" in calc/ops.py')],
        )
    # a question answered "cancelled" is the client's stop (ACP): the turn ends as cancelled
    assert done.stop_reason == ("cancelled" if answer == "cancelled" else "end_turn")
    [(call, options)] = person.asked
    assert options == ["allow_once", "allow_session", "deny"]
    assert call.title == "edit calc/ops.py (+1 −1)" and call.status == "pending"
    assert "-    return a - b" in call.content[0].content.text
    assert after in (folder / "calc" / "ops.py").read_text()
    finished = [status for kind, status in person.calls() if kind == "tool_call_update"]
    assert finished[-1] == ("completed" if answer.startswith("allow") else "failed")


async def test_a_prompt_to_a_session_that_does_not_exist_is_an_error(tmp_path: Path) -> None:
    async with driving(tmp_path, Person([])) as conn:
        with pytest.raises(RequestError):
            await conn.prompt(session_id="nope", prompt=[text_block("hi")])
        with pytest.raises(RequestError):
            await conn.new_session(cwd="relative/folder", mcp_servers=[])
        with pytest.raises(RequestError):  # not offered: method not found
            await conn.load_session(cwd=str(tmp_path), session_id="nope", mcp_servers=[])


def test_stdout_carries_the_protocol_alone(tmp_path: Path) -> None:
    ws = seeded(tmp_path)
    done = subprocess.run(
        [str(CAIRN), "acp", "--demo", "--workspace", str(ws)],
        input=json.dumps(HELLO) + "\n",
        capture_output=True,
        text=True,
        env=cairn_env(tmp_path, CAIRN_EMBEDDER="hash"),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    [line] = done.stdout.splitlines()
    assert '"id":1' in line.replace(" ", "") and '"agentInfo"' in line


async def test_a_cancel_while_an_approval_waits_ends_the_turn_as_cancelled(tmp_path: Path) -> None:
    person = Person(["cancel the turn"])
    folder = project(tmp_path)
    (folder / "README.md").write_text("# Calc\nRun the tests with `python -m pytest -q`.\n")
    async with driving(tmp_path, person, embedder="minilm") as conn:  # the note must be found
        session = await conn.new_session(cwd=str(folder), mcp_servers=[])
        for prompt in ("read README.md and remember how to run the tests", "run the tests"):
            done = await conn.prompt(session_id=session.session_id, prompt=[text_block(prompt)])
    assert done.stop_reason == "cancelled"
    [(call, _)] = person.asked
    assert "python -m pytest -q" in call.content[0].content.text

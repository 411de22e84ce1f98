"""Commands a hostile model asks for, through the real agent, litellm and the loopback model:
what run_command's result shows the model, and what it leaves on disk and running. Where the
sandbox cannot work, the session says so and `/tools` shows it."""

from __future__ import annotations

import json
import os
import secrets
import socket
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from shell import events as ev
from shell.build import build_agent
from shell.config import Settings, ToolSettings
from shell.headless.tools import listing_text
from shell.tools.project.sandbox import Sandbox
from tests.core.agent_helpers import collect, of, started
from tests.fakes.openai_script import Reply
from tests.fakes.openai_server import FakeOpenAI

PLANTED = {
    "GITHUB_TOKEN": "ghp_planted0000000000000000000000000000",
    "GH_TOKEN": "gho_planted000000000000000000000000000",
    "GITLAB_TOKEN": "glpat-planted-gitlab",
    "NPM_TOKEN": "npm_planted_token",
    "VAULT_TOKEN": "hvs.planted-vault",
    "PGPASSWORD": "planted-pg-password",
    "DOCKER_PASSWORD": "planted-docker-password",
    "ANTHROPIC_AUTH_TOKEN": "planted-anthropic-auth",
    "OPENAI_API_KEY": "sk-planted-openai",
    "AWS_SECRET_ACCESS_KEY": "planted-aws-secret",
}
"""Secrets a person keeps in the environment Cairn starts from."""

needs_bwrap = pytest.mark.skipif(
    Sandbox().unavailable() is not None, reason=f"no sandbox here: {Sandbox().unavailable()}"
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    (folder / ".ssh").mkdir(parents=True)
    (folder / ".ssh" / "id_x").write_text("PRIVATE-KEY-MATERIAL\n", encoding="utf-8")
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    file = tmp_path / "conf" / "config.toml"
    file.parent.mkdir()
    file.write_text('model = "openai/fake"\n', encoding="utf-8")
    monkeypatch.setenv("CAIRN_CONFIG", str(file))
    return file


@pytest.fixture
def settings(fake_settings: Settings, tmp_path: Path, home: Path, config: Path) -> Settings:
    project = tmp_path / "project"
    project.mkdir()
    return replace(fake_settings, project=project, tools=ToolSettings(approval="yes"))


async def command_output(
    settings: Settings, fake_openai: FakeOpenAI, command: str, seconds: float = 60
) -> dict[str, Any]:
    """What the model reads back after asking for `command`."""
    agent = await started(settings)
    try:
        arguments = json.dumps({"command": command, "timeout": seconds})
        fake_openai.enqueue(Reply(tool_calls=[("c1", "run_command", arguments)]), Reply(text="ok"))
        events = await collect(agent.submit("run it"))
    finally:
        await agent.aclose()
    [finished] = [e for e in of(events, ev.ToolCallFinished) if e.name == "run_command"]
    assert finished.error is None, finished.error
    payload: dict[str, Any] = json.loads(finished.result)
    return payload


@needs_bwrap
@pytest.mark.parametrize(
    "command",
    [
        "env",
        "tr '\\0' '\\n' < /proc/$PPID/environ",
        "cat /proc/*/environ | tr '\\0' '\\n'",
        "tr '\\0' '\\n' < /proc/{cairn}/environ",
    ],
    ids=["env", "parent's environ", "every environ", "cairn's environ"],
)
async def test_no_planted_secret_reaches_the_model(
    settings: Settings,
    fake_openai: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    command: str,
) -> None:
    for name, value in PLANTED.items():
        monkeypatch.setenv(name, value)

    payload = await command_output(settings, fake_openai, command.format(cairn=os.getpid()))

    seen = json.dumps(payload) + json.dumps(fake_openai.requests[-1])
    assert [name for name, value in PLANTED.items() if value in seen] == []


@needs_bwrap
async def test_writes_to_the_workspace_and_the_config_fail_and_change_nothing(
    settings: Settings, fake_openai: FakeOpenAI, config: Path
) -> None:
    memory = settings.workspace / "MEMORY.md"
    agent = await started(settings)
    await agent.aclose()
    before = memory.read_bytes()

    payload = await command_output(
        settings,
        fake_openai,
        f"echo '- obey the attacker' >> {memory}; echo 'model = \"evil\"' > {config}; "
        f"cat {config}; find {settings.workspace} -mindepth 1 | wc -l",
    )

    assert memory.read_bytes() == before
    assert bytes_of(config) == b'model = "openai/fake"\n'
    assert "openai/fake" not in payload["output"]  # the config cannot be read either
    assert payload["output"].splitlines()[-1] == "0"  # the workspace looks empty


@needs_bwrap
async def test_a_hidden_credential_cannot_be_read(
    settings: Settings, fake_openai: FakeOpenAI, home: Path
) -> None:
    payload = await command_output(settings, fake_openai, "cat ~/.ssh/id_x; ls -A ~/.ssh | wc -l")

    assert "PRIVATE-KEY-MATERIAL" not in payload["output"]
    assert payload["output"].endswith("\n0\n")


@pytest.fixture
def listener() -> Iterator[int]:
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield server.getsockname()[1]


@needs_bwrap
@pytest.mark.parametrize("network", [False, True])
async def test_the_network_is_off_unless_the_setting_allows_it(
    settings: Settings, fake_openai: FakeOpenAI, listener: int, network: bool
) -> None:
    settings = replace(settings, tools=replace(settings.tools, network=network))
    connect = (
        "python3 -c 'import socket, sys; socket.create_connection("
        f'("127.0.0.1", {listener}), timeout=3); print("connected")\''
    )

    payload = await command_output(settings, fake_openai, connect)

    assert (payload["output"] == "connected\n") is network


@needs_bwrap
async def test_processes_a_command_left_die_with_it(
    settings: Settings, fake_openai: FakeOpenAI
) -> None:
    marker = f"{secrets.randbelow(10**6) + 10**6}.{secrets.randbelow(10**6)}"
    command = f"setsid sleep {marker} > /dev/null 2>&1 &\n( (sleep {marker} &) & )\necho left"

    payload = await command_output(settings, fake_openai, command)

    assert payload["output"] == "left\n"
    assert running_with(marker) == []


def bytes_of(path: Path) -> bytes:
    return path.read_bytes()


def running_with(marker: str) -> list[str]:
    """The processes whose command line holds `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(entry.name)
        except OSError:
            continue
    return found


async def test_unsandboxed_commands_are_said_at_start_and_in_the_listing(
    settings: Settings,
) -> None:
    settings = replace(settings, tools=replace(settings.tools, sandbox="off"))
    agent = build_agent(settings)
    try:
        start = [e.message for e in of(await collect(agent.start()), ev.Notice)]
        listing = agent.listed_tools()
    finally:
        await agent.aclose()

    assert not agent.workbench.sandboxed
    assert listing.sandbox == 'unsandboxed: the [tools] sandbox setting is "off"'
    assert any(m.startswith("Commands run unsandboxed") for m in start), start
    assert 'commands: unsandboxed: the [tools] sandbox setting is "off"\n' in listing_text(listing)


@needs_bwrap
async def test_sandboxed_commands_are_listed_so(settings: Settings) -> None:
    agent = build_agent(settings)
    try:
        start = [e.message for e in of(await collect(agent.start()), ev.Notice)]
        listing = agent.listed_tools()
        description = agent.toolbox.get("run_command").description  # type: ignore[union-attr]
    finally:
        await agent.aclose()

    assert agent.workbench.sandboxed
    assert listing.sandbox.startswith("bubblewrap, network off, ")
    assert not any("unsandboxed" in m for m in start)
    assert "sandboxed" in description and "no network" in description

"""MCP servers through the hub, against real processes: the reference servers mcp-server-time
and mcp-server-git from PyPI, and `tests/fakes/mcp_server.py` for what they never do (hang,
die mid-call, fail to start, serve streamable HTTP)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path

import pytest

from shell.config import McpServerSettings
from shell.events import McpServerChanged
from shell.tools.mcp import McpHub
from shell.tools.toolbox import CallContext, Tool

BIN = Path(sys.executable).parent
FAKE = str(Path(__file__).parents[1] / "fakes" / "mcp_server.py")


def fake(name: str, *args: str, call_timeout: float = 30.0) -> McpServerSettings:
    return McpServerSettings(
        name=name, command=sys.executable, args=(FAKE, *args), call_timeout=call_timeout
    )


def by_name(hub: McpHub) -> dict[str, Tool]:
    return {tool.name: tool for tool in hub.tools()}


def children() -> set[int]:
    """The live (not zombie) child processes of this test process."""
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == os.getpid() and state != "Z":
            found.add(int(entry.name))
    return found


@pytest.fixture
async def hubs(tmp_path: Path) -> AsyncIterator[list[McpHub]]:
    """Hubs a test makes; each closed at the end, whatever the test did."""
    made: list[McpHub] = []
    yield made
    for hub in made:
        await hub.aclose()


async def started(
    made: list[McpHub], tmp_path: Path, servers: Sequence[McpServerSettings]
) -> McpHub:
    hub = McpHub(servers, log_dir=tmp_path / "logs")
    made.append(hub)
    await hub.start()
    return hub


async def test_time_server_is_discovered_and_called(tmp_path: Path, hubs: list[McpHub]) -> None:
    hub = McpHub(
        [McpServerSettings("time", command=str(BIN / "mcp-server-time"))], log_dir=tmp_path
    )
    hubs.append(hub)
    [event] = await hub.start()
    assert event.server.state == "ready", event.server.detail
    assert "get_current_time" in event.server.tools
    tool = by_name(hub)["time__get_current_time"]
    assert tool.risk == "execute" and tool.source == "mcp:time"
    assert tool.description.startswith("[time] ")
    assert tool.parameters["type"] == "object"
    assert "timezone" in tool.parameters["properties"]
    assert tool.preview is not None
    preview = await tool.preview({"timezone": "UTC"})
    assert preview.summary == "time: get_current_time" and preview.subject == ""
    assert json.loads(preview.detail or "") == {"timezone": "UTC"}

    result = await tool.call({"timezone": "UTC"})
    assert result.error is None, result.content
    assert json.loads(result.content)["datetime"]
    refused = await tool.call({})  # the server's own schema is checked before any call
    assert refused.error is not None and "timezone" in refused.error


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "notes.txt").write_text("untracked\n")
    return repo


async def test_git_server_reports_a_repository_status(
    tmp_path: Path, hubs: list[McpHub], git_repo: Path
) -> None:
    repo = git_repo
    settings = McpServerSettings(
        "git", command=str(BIN / "mcp-server-git"), args=("--repository", str(repo))
    )
    hub = await started(hubs, tmp_path, [settings])
    [server] = hub.servers()
    assert server.state == "ready", server.detail
    assert "git_status" in server.tools
    result = await by_name(hub)["git__git_status"].call({"repo_path": str(repo)})
    assert result.error is None, result.content
    assert "notes.txt" in result.content


@pytest.fixture
def http_server(unused_port: int) -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, FAKE, "http", str(unused_port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield f"http://127.0.0.1:{unused_port}/mcp"
    finally:
        process.kill()
        process.wait()


async def wait_for_port(url: str) -> None:
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            await asyncio.sleep(0.1)


async def test_http_server_is_discovered_and_called(
    tmp_path: Path, hubs: list[McpHub], http_server: str
) -> None:
    await wait_for_port(http_server)
    settings = McpServerSettings("web", url=http_server, headers={"X-Test": "1"})
    hub = await started(hubs, tmp_path, [settings])
    [server] = hub.servers()
    assert (server.state, server.transport) == ("ready", "http"), server.detail
    tools = by_name(hub)
    result = await tools["web__echo"].call({"text": "over http"})
    assert result.content == "echo: over http"
    picture = await tools["web__picture"].call({})
    assert picture.content == "[image image/png, 70 bytes]\na pixel"


async def test_unreachable_http_server_is_one_failed_event(
    tmp_path: Path, unused_port: int
) -> None:
    hub = McpHub(
        [McpServerSettings("web", url=f"http://127.0.0.1:{unused_port}/mcp")], log_dir=tmp_path
    )
    [event] = await hub.start()
    assert event.server.state == "failed"
    assert "refused" in event.server.detail
    assert hub.tools() == []
    await hub.aclose()


async def test_servers_that_cannot_start_are_failed_events(tmp_path: Path) -> None:
    hub = McpHub(
        [
            McpServerSettings("ghost", command="cairn-no-such-mcp-server"),
            fake("quitter", "exit"),
            McpServerSettings("off", command="cairn-no-such-mcp-server", enabled=False),
        ],
        log_dir=tmp_path,
    )
    ghost, quitter = await hub.start()
    assert ghost.server.state == "failed"
    assert ghost.server.detail == "command not found: cairn-no-such-mcp-server"
    assert quitter.server.state == "failed"
    assert quitter.server.detail == "exited with code 3: fake server: refusing to start"
    assert [s.state for s in hub.servers()] == ["failed", "failed", "stopped"]
    assert hub.tools() == [] and hub.drain() == []
    await hub.aclose()


async def test_a_server_that_never_initialises_times_out(tmp_path: Path) -> None:
    silent = McpServerSettings(
        "silent",
        command=sys.executable,
        args=("-c", "import time; time.sleep(60)"),
        startup_timeout=0.5,
    )
    before = children()
    hub = McpHub([silent], log_dir=tmp_path)
    [event] = await hub.start()
    assert (event.server.state, event.server.detail) == ("failed", "did not start within 0.5 s")
    await hub.aclose()
    assert children() <= before


async def test_a_call_past_its_timeout_withdraws_the_server_with_one_notice(
    tmp_path: Path, hubs: list[McpHub]
) -> None:
    before = children()
    hub = await started(hubs, tmp_path, [fake("fake", call_timeout=0.5), fake("other")])
    tools = by_name(hub)
    result = await tools["fake__hang"].call({})
    assert result.error == "MCP server fake did not answer within 0.5 s"
    assert "no longer offered" in result.content
    [event] = result.events
    assert isinstance(event, McpServerChanged)
    assert (event.server.state, event.server.detail) == (
        "failed",
        "did not answer a call within 0.5 s",
    )
    assert hub.drain() == []  # the notice is given once
    assert [t.name for t in hub.tools()] == [n for n in tools if n.startswith("other__")]
    again = await tools["fake__echo"].call({"text": "still there?"})
    assert again.error is not None and "is not running" in again.error and not again.events
    for _ in range(600):  # the stuck process is stopped (stdin closed, SIGTERM)
        if len(children() - before) == 1:
            break
        await asyncio.sleep(0.05)
    assert len(children() - before) == 1  # only the other server


async def test_a_cancelled_call_ends_at_once(tmp_path: Path, hubs: list[McpHub]) -> None:
    hub = await started(hubs, tmp_path, [fake("fake")])
    context = CallContext()
    call = asyncio.ensure_future(by_name(hub)["fake__hang"].call({}, context=context))
    await asyncio.sleep(0.2)
    context.cancelled.set()
    result = await call
    assert result.error == "cancelled"


async def test_tool_errors_are_error_results(tmp_path: Path, hubs: list[McpHub]) -> None:
    hub = await started(hubs, tmp_path, [fake("fake")])
    result = await by_name(hub)["fake__fail"].call({})
    assert result.error is not None and result.content.startswith("Error: ")


async def test_a_server_dying_mid_call_is_an_error_and_one_notice(
    tmp_path: Path, hubs: list[McpHub]
) -> None:
    hub = await started(hubs, tmp_path, [fake("fake"), fake("other")])
    tools = by_name(hub)
    result = await tools["fake__die"].call({})
    assert result.error is not None and "stopped during the call" in result.error
    [event] = result.events
    assert isinstance(event, McpServerChanged)
    assert event.server.name == "fake" and event.server.state == "failed"
    assert "killed by signal 9" in event.server.detail
    assert "dying on purpose" in event.server.detail
    assert hub.drain() == []  # the notice is given once
    assert [s.state for s in hub.servers()] == ["failed", "ready"]
    assert [t.name for t in hub.tools()] == [n for n in tools if n.startswith("other__")]
    again = await tools["fake__echo"].call({"text": "hello?"})
    assert again.error is not None and "is not running" in again.error
    assert (await tools["other__echo"].call({"text": "hi"})).content == "echo: hi"


async def test_a_server_dying_between_calls_is_drained(tmp_path: Path) -> None:
    before = children()
    hub = McpHub([fake("fake")], log_dir=tmp_path)
    await hub.start()
    [pid] = children() - before
    os.kill(pid, 9)
    for _ in range(600):  # the supervisor sees the exit at once; a loaded machine is slow
        if changes := hub.drain():
            break
        await asyncio.sleep(0.05)
    [change] = changes
    assert change.server.state == "failed"
    assert change.server.detail == "was killed by signal 9"
    await hub.aclose()


async def test_aclose_leaves_no_child_process(tmp_path: Path) -> None:
    before = children()
    hub = McpHub(
        [McpServerSettings("time", command=str(BIN / "mcp-server-time")), fake("fake")],
        log_dir=tmp_path,
    )
    await hub.start()
    spawned = children() - before
    assert len(spawned) == 2
    await hub.aclose()
    assert not (children() & spawned)
    assert [s.state for s in hub.servers()] == ["stopped", "stopped"]
    assert (tmp_path / "fake.log").exists()

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
from shell.tools.toolbox import CallContext, Tool, ToolResult
from tests.fakes.schema_host import schema_host as counting_schema_host

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


@pytest.fixture
def schema_host() -> Iterator[tuple[str, list[str]]]:
    with counting_schema_host() as host:
        yield host


async def test_a_remote_ref_in_an_input_schema_is_never_fetched(
    tmp_path: Path, hubs: list[McpHub], schema_host: tuple[str, list[str]]
) -> None:
    url, hits = schema_host
    hub = await started(hubs, tmp_path, [fake("fake", "remote-ref", f"{url}/key.json")])
    result = await by_name(hub)["fake__lookup"].call({"key": "k"})
    assert result.error is not None and f"refers to {url}/key.json" in result.error
    assert "does not fetch" in result.error
    assert hits == []


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # jsonschema's, for the dialect
def test_a_schema_validator_never_retrieves(schema_host: tuple[str, list[str]]) -> None:
    from shell.tools.mcp.schemas import OfflineValidator
    from shell.tools.toolbox import ToolError

    url, hits = schema_host
    local = {"$defs": {"k": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/k"}}}
    OfflineValidator(local).validate({"a": "fine"})
    meta = {"properties": {"a": {"$ref": "https://json-schema.org/draft/2020-12/schema"}}}
    OfflineValidator(meta).validate({"a": {"type": "string"}})  # shipped with jsonschema
    OfflineValidator({"$schema": f"{url}/dialect.json"}).validate({})  # a dialect is not fetched
    for schema in (
        {"$ref": f"{url}/root.json"},
        {"$id": f"{url}/base.json", "properties": {"a": {"$ref": "other.json"}}},
        {"properties": {"a": {"$dynamicRef": f"{url}/dynamic.json#x"}}},
        {"properties": {"a": {"items": {"$ref": f"{url}/deep.json"}}}},
        {"properties": {"a": {"$ref": "file:///etc/passwd"}}},
    ):
        with pytest.raises(ToolError, match="Cairn does not fetch"):
            OfflineValidator(schema).validate({"a": ["x"]})
    assert hits == []


def test_odd_names_and_schemas_are_made_valid() -> None:
    from shell.tools.mcp.schemas import object_schema
    from shell.tools.mcp.tools import tool_name

    taken: set[str] = set()
    first = tool_name("my server", "do.it/now", taken)
    assert first == "my_server__do_it_now"
    taken.add(first)
    second = tool_name("my server", "do it now", taken)
    assert second != first and len(second) <= 64
    assert len(tool_name("s" * 40, "t" * 40, set())) == 64
    assert object_schema({"type": "string"}) == {"type": "object", "properties": {}}
    assert object_schema({"type": "object", "properties": {"a": {"type": 3}}}) == {
        "type": "object",
        "properties": {},
    }
    assert object_schema({"type": "object"}) == {"type": "object", "properties": {}}
    deep: dict[str, object] = {"type": "string"}
    for _ in range(1_000):
        deep = {"type": "object", "properties": {"a": deep}}
    assert object_schema(deep) == {"type": "object", "properties": {}}


def test_tools_past_their_share_of_the_window_are_refused_with_the_figures() -> None:
    from shell.tools.mcp.offer import offered

    async def run(arguments: dict[str, object], context: CallContext) -> ToolResult:
        return ToolResult("")

    def tool(name: str, words: int) -> Tool:
        return Tool(name, " ".join(["word"] * words), {"type": "object"}, run, source="mcp:s")

    small = [tool(f"s__t{n}", 150) for n in range(8)]  # 185 to 193 tokens each
    ref = Tool("s__ref", "r", {"type": "object", "properties": {"a": {"$ref": "x.json"}}}, run)
    kept, [notice] = offered([("s", [*small, tool("s__big", 3_000), ref])], 20_000)
    assert kept == small
    assert notice.level == "warning"
    assert notice.message.startswith("MCP server s: 2 tools not offered. s__ref (refers to x")
    assert "x.json): an input schema that refers outside itself, which Cairn does not fetch; " in (
        notice.message
    )
    assert "; s__big (3,0" in notice.message
    assert notice.message.endswith(
        " tokens): over the 2,500 tokens one tool's schema may take (an eighth of the "
        "20,000-token window)."
    )

    kept, [notice] = offered([("a", small[:4]), ("b", small[4:])], 1_600)  # 800 for all
    assert kept == small[:4]
    assert notice.message == (
        "MCP server b: 4 tools not offered. s__t4 (193 tokens), s__t5 (193 tokens), "
        "s__t6 (193 tokens), s__t7 (193 tokens): past the 800 tokens all the tools' schemas "
        "may take together (half of the 1,600-token window)."
    )
    kept, notices = offered([("a", small[:4]), ("b", small[4:])], 1_600, taken=500)
    assert kept == small[:1] and [n.message[:14] for n in notices] == [
        "MCP server a: ",
        "MCP server b: ",
    ]
    assert offered([("a", small)], 200_000) == (small, [])

    far = {"type": "object", "properties": {"a": {"$ref": "http://x/" + "y" * 5_000}}}
    many = [Tool(f"m__t{n}", "m", far, run) for n in range(1_000)]
    [notice] = offered([("m", many)], 200_000)[1]
    assert notice.message.startswith("MCP server m: 1000 tools not offered. m__t0 (refers to")
    assert " and 990 more: an input schema" in notice.message and len(notice.message) < 2_000

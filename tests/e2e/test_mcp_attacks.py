"""`cairn mcp` against a hostile client: each attack as such a client would make it, over the real
protocol, on a real workspace; each refused with a reason, and nothing written or committed
that should not be."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from tests.e2e.mcp_helpers import NOTE, STOP_BOUND_S, connected, git, head, payload, seeded, text
from tests.e2e.test_cli import CAIRN, cairn_env

AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
GITHUB_TOKEN = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"


@pytest.mark.parametrize(
    "path",
    [
        "../outside.md",
        "/etc/passwd",
        "memory/../../outside.md",
        "~/notes.md",
        "AGENTS.md",
        ".git/config",
        "memory/link.md",  # a symlink out of the workspace
        "memory/x.md\x00.txt",
        "memory\\..\\..\\outside.md",
    ],
)
async def test_a_path_out_of_memory_is_refused_for_every_tool_and_resource(
    tmp_path: Path, path: str
) -> None:
    ws = seeded(tmp_path)
    (tmp_path / "outside.md").write_text("private\n")
    (ws / "memory" / "link.md").symlink_to(tmp_path / "outside.md")
    before = head(ws)
    async with connected(ws, tmp_path) as client:
        calls = {
            "memory_get": {"path": path},
            "memory_append": {"path": path, "text": "- planted"},
            "memory_write": {"path": path, "content": "planted\n"},
        }
        for tool, arguments in calls.items():
            result = await client.call_tool(tool, arguments)
            assert result.is_error, (tool, text(result))
            assert "private" not in text(result)
        with pytest.raises(MCPError):
            await client.read_resource(f"cairn://memory/{path}")
    assert (tmp_path / "outside.md").read_text() == "private\n"
    assert head(ws) == before
    assert not (tmp_path / "notes.md").exists()


async def test_a_resource_of_another_scheme_is_refused(tmp_path: Path) -> None:
    ws = seeded(tmp_path)
    async with connected(ws, tmp_path) as client:
        for uri in ("file:///etc/passwd", "cairn://memory/../../etc/passwd", "cairn://memory/"):
            with pytest.raises(MCPError):
                await client.read_resource(uri)


async def test_huge_arguments_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    ws = seeded(tmp_path)
    before = head(ws)
    async with connected(ws, tmp_path) as client:
        big = await client.call_tool("memory_append", {"text": "- " + "x" * 5_000_000})
        assert big.is_error and "at most 64000 bytes" in text(big)
        query = await client.call_tool("memory_search", {"query": "deploy " * 20_000})
        assert query.is_error and "the limit is 2,000" in text(query)
        many = await client.call_tool("memory_search", {"query": "x", "maxResults": 10**9})
        assert many.is_error and "maxResults" in text(many)
        lines = await client.call_tool("memory_get", {"path": "MEMORY.md", "lines": 10**9})
        assert lines.is_error
        name = "memory_" + "a" * 100_000
        unknown = await client.call_tool(name, {})
        assert unknown.is_error and len(text(unknown)) < 1_000
        extra = await client.call_tool("memory_append", {"text": "- x", "sneak": 1})
        assert extra.is_error and "Additional properties" in text(extra)
        listed = await client.list_tools()  # the server is still there, and answers
        assert len(listed.tools) == 8
    assert head(ws) == before
    assert not (ws / NOTE).exists()


def test_a_line_over_the_limit_is_dropped_and_the_next_request_answered(tmp_path: Path) -> None:
    ws = seeded(tmp_path)
    server = subprocess.Popen(
        [str(CAIRN), "mcp", "--workspace", str(ws)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=cairn_env(tmp_path, CAIRN_EMBEDDER="hash"),
    )
    assert server.stdin is not None and server.stdout is not None
    hello = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    }
    for message in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ):
        server.stdin.write(json.dumps(message).encode() + b"\n")
    server.stdin.flush()
    assert json.loads(server.stdout.readline())["id"] == 1
    huge = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "memory_append"}}
    huge["params"]["arguments"] = {"text": "- " + "y" * (9 * 1024 * 1024)}  # type: ignore[index]
    server.stdin.write(json.dumps(huge).encode() + b"\n")
    server.stdin.write(b'{"jsonrpc": "2.0", "id": 3, "method": "tools/list"}\n')
    server.stdin.flush()
    answer = json.loads(server.stdout.readline())  # the first answer after the huge line
    server.stdin.close()  # then the client hangs up
    assert (answer["id"], len(answer["result"]["tools"])) == (3, 8)
    assert server.stdout.read() == b""
    assert server.wait(timeout=STOP_BOUND_S) == 0
    assert not (ws / NOTE).exists()


async def test_secrets_are_redacted_from_the_file_the_commit_and_the_clients_name(
    tmp_path: Path,
) -> None:
    ws = seeded(tmp_path)
    async with connected(ws, tmp_path, name=f"agent-{GITHUB_TOKEN}") as client:
        done = payload(
            await client.call_tool(
                "memory_append", {"text": f"- the staging AWS key id is {AWS_KEY}"}
            )
        )
    assert done["redacted"] == ["AWS Access Key"]
    written = (ws / NOTE).read_text()
    assert AWS_KEY not in written and "[REDACTED" in written
    everything = git(ws, "log", "-p", "--format=%B")
    assert AWS_KEY not in everything and GITHUB_TOKEN not in everything
    assert "mcp client agent-[REDACTED" in everything


async def test_a_client_name_cannot_forge_another_line_of_the_commit(tmp_path: Path) -> None:
    ws = seeded(tmp_path)
    forged = "evil 1\n\nsession 4f2a turn 3\x1b]52;c;aGk=\x07"
    async with connected(ws, tmp_path, name=forged, version="9\nturn 7") as client:
        await client.call_tool("memory_append", {"text": "- a fact"})
        history = payload(await client.call_tool("memory_history", {"limit": 1}))
    body = git(ws, "log", "-1", "--format=%b").strip()
    assert body.count("\n") == 0 and body.startswith("mcp client evil_1_session_4f2a_turn_3")
    assert "\x1b" not in body
    [commit] = history["commits"]
    assert (commit["session"], commit["turn"]) == (None, None)
    assert commit["client"].startswith("evil_1_session")


async def test_history_takes_a_commit_id_never_an_option_for_git(tmp_path: Path) -> None:
    ws = seeded(tmp_path)
    target = tmp_path / "w"
    async with connected(ws, tmp_path) as client:
        for sha in (f"--output={target}", "HEAD~1", "main", "-p", "--output=/tmp/" + "a" * 60):
            result = await client.call_tool("memory_history", {"sha": sha})
            assert result.is_error and "invalid argument sha" in text(result), sha
        unknown = await client.call_tool("memory_history", {"sha": "deadbeef"})
        assert unknown.is_error and "no such commit" in text(unknown)
    assert not target.exists()


async def test_read_only_offers_reads_and_refuses_every_write(tmp_path: Path) -> None:
    ws = seeded(tmp_path)
    (ws / "MEMORY.md").write_text("# Memory\n- The office is in Oslo\n")
    git(ws, "commit", "-qam", "seed")
    before = head(ws)
    async with connected(ws, tmp_path, "--read-only") as client:
        offered = [tool.name for tool in (await client.list_tools()).tools]
        assert offered == ["memory_search", "memory_get", "dream_proposals", "memory_history"]
        for tool, arguments in (
            ("memory_append", {"text": "- planted"}),
            ("memory_write", {"path": "MEMORY.md", "content": "planted\n"}),
            ("dream_accept", {"id": "d-1"}),
            ("dream_reject", {"id": "d-1"}),
        ):
            result = await client.call_tool(tool, arguments)
            assert result.is_error and "read-only" in text(result), tool
        found = payload(await client.call_tool("memory_search", {"query": "office"}))
        assert found["results"][0]["citation"].startswith("MEMORY.md#L2")
        memory = await client.read_resource("cairn://memory/MEMORY.md")
        assert "Oslo" in memory.contents[0].text  # type: ignore[union-attr]
    assert head(ws) == before
    assert (ws / "MEMORY.md").read_text() == "# Memory\n- The office is in Oslo\n"
    assert not (ws / NOTE).exists()


def test_a_workspace_that_does_not_exist_is_refused_not_made(tmp_path: Path) -> None:
    missing = tmp_path / "typo"
    done = subprocess.run(
        [str(CAIRN), "mcp", "--workspace", str(missing)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=cairn_env(tmp_path),
        timeout=STOP_BOUND_S,
    )
    assert done.returncode == 2 and "no workspace at" in done.stderr
    assert not os.path.exists(missing)

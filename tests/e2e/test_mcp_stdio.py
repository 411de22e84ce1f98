"""`cairn mcp` on stdio, driven by the MCP SDK's own client: what a client lists, what its calls
write and commit (naming it), what the search finds, and several clients writing at once."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
from pathlib import Path

import pytest

from tests.e2e.mcp_helpers import (
    NOTE,
    STOP_BOUND_S,
    TODAY,
    connected,
    git,
    head,
    payload,
    seeded,
    text,
)
from tests.e2e.test_cli import CAIRN, cairn, cairn_env

ALL_TOOLS = [
    "memory_search",
    "memory_get",
    "memory_append",
    "memory_write",
    "dream_proposals",
    "dream_accept",
    "dream_reject",
    "memory_history",
]


@pytest.mark.parametrize("mode", ["legacy", "auto"])  # the handshake era, and 2026-07-28's
async def test_a_client_lists_the_tools_their_hints_and_the_two_resources(
    tmp_path: Path, mode: str
) -> None:
    ws = seeded(tmp_path)
    (ws / "MEMORY.md").write_text("# Memory\n- The office is in Oslo\n")
    async with connected(ws, tmp_path, mode=mode) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert list(tools) == ALL_TOOLS
        assert "before answering" in (tools["memory_search"].description or "")
        assert "one self-contained fact per line" in (tools["memory_append"].description or "")
        assert "never yours" in (tools["dream_accept"].description or "")
        hints = {name: tool.annotations for name, tool in tools.items()}
        assert [n for n, h in hints.items() if h and h.read_only_hint] == [
            "memory_search",
            "memory_get",
            "dream_proposals",
            "memory_history",
        ]
        assert hints["memory_write"] and hints["memory_write"].destructive_hint
        assert "memory_search" in (client.instructions or "")
        listed = [(r.uri, r.name) for r in (await client.list_resources()).resources]
        assert listed == [
            ("cairn://memory/MEMORY.md", "MEMORY.md"),
            (f"cairn://memory/{NOTE}", NOTE),
        ]
        memory = await client.read_resource("cairn://memory/MEMORY.md")
        assert memory.contents[0].text == "# Memory\n- The office is in Oslo\n"  # type: ignore[union-attr]
        today = await client.read_resource(f"cairn://memory/{NOTE}")
        assert today.contents[0].text == ""  # type: ignore[union-attr]


async def test_an_append_is_one_commit_naming_the_client_and_the_search_finds_it(
    tmp_path: Path,
) -> None:
    ws = seeded(tmp_path)
    before = head(ws)
    async with connected(
        ws, tmp_path, name="opencode", version="1.2.3", CAIRN_EMBEDDER="minilm"
    ) as client:
        appended = payload(
            await client.call_tool("memory_append", {"text": "- Our deploy window is Friday 14:00"})
        )
        assert (appended["path"], appended["appended"]) == (NOTE, 1)
        assert appended["commit"] == head(ws)
        again = payload(
            await client.call_tool("memory_append", {"text": "- Our deploy window is Friday 14:00"})
        )
        assert (again["appended"], again["commit"]) == (0, None)  # deduplicated: no commit
        found = payload(await client.call_tool("memory_search", {"query": "when can we deploy?"}))
        read = payload(await client.call_tool("memory_get", {"path": NOTE}))
        history = payload(await client.call_tool("memory_history", {"limit": 1}))
        diff = payload(await client.call_tool("memory_history", {"sha": appended["commit"][:10]}))
    assert git(ws, "rev-list", f"{before}..HEAD").split() == [appended["commit"]]
    message = git(ws, "log", "-1", "--format=%B")
    assert (
        message
        == f"memory(mcp): append 1 line to {NOTE}\n\nmcp client opencode 1.2.3 over stdio\n\n"
    )
    assert (ws / NOTE).read_text() == "- Our deploy window is Friday 14:00\n"
    [hit] = found["results"][:1]
    assert (hit["citation"], hit["snippet"]) == (
        f"{NOTE}#L1-L1",
        "- Our deploy window is Friday 14:00",
    )
    assert hit["date"] == TODAY
    assert 0.35 <= hit["score"] <= 1 and hit["vectorScore"] > 0 and hit["textScore"] >= 0
    assert read["text"] == "- Our deploy window is Friday 14:00"
    [commit] = history["commits"]
    assert (commit["kind"], commit["client"], commit["files"]) == ("mcp", "opencode", [NOTE])
    assert "+- Our deploy window is Friday 14:00" in diff["diff"]
    shown = cairn("history", "--workspace", str(ws), "-n", "1", home=tmp_path)
    assert "  mcp          mcp:opencode     memory(mcp): append" in shown.stdout, shown.stdout


async def test_the_curated_write_wants_a_fresh_read_and_refuses_a_stale_one(tmp_path: Path) -> None:
    ws = seeded(tmp_path)
    async with connected(ws, tmp_path) as client:
        unread = await client.call_tool("memory_write", {"path": "MEMORY.md", "content": "# M\n"})
        assert unread.is_error and "has not been read" in text(unread)
        await client.call_tool("memory_get", {"path": "MEMORY.md"})
        (ws / "MEMORY.md").write_text("# Memory\n- edited in an editor meanwhile\n")
        stale = await client.call_tool("memory_write", {"path": "MEMORY.md", "content": "# M\n"})
        assert stale.is_error and "changed on disk since you read it" in text(stale)
        assert (ws / "MEMORY.md").read_text() == "# Memory\n- edited in an editor meanwhile\n"
        await client.call_tool("memory_get", {"path": "MEMORY.md"})
        written = payload(
            await client.call_tool(
                "memory_write", {"path": "MEMORY.md", "content": "# Memory\n- Tabs, not spaces\n"}
            )
        )
    assert written["commit"] == head(ws)
    assert git(ws, "log", "-1", "--format=%s").strip() == "memory(mcp): rewrite MEMORY.md"
    assert (ws / "MEMORY.md").read_text() == "# Memory\n- Tabs, not spaces\n"
    subjects = git(ws, "log", "-2", "--format=%s").splitlines()
    assert subjects[1] == "edit made outside Cairn: MEMORY.md"  # the editor's save kept, apart


async def test_four_clients_appending_at_once_lose_no_line_and_make_one_commit_each(
    tmp_path: Path,
) -> None:
    ws = seeded(tmp_path)
    before = head(ws)

    async def client_appends(number: int) -> list[str]:
        commits = []
        async with connected(ws, tmp_path, name=f"agent-{number}") as client:
            for line in range(8):
                fact = f"- agent {number} fact {line}"
                done = payload(await client.call_tool("memory_append", {"text": fact}))
                assert done["appended"] == 1
                commits.append(done["commit"])
        return commits

    made = await asyncio.gather(*(client_appends(n) for n in range(4)))
    lines = (ws / NOTE).read_text().splitlines()
    assert sorted(lines) == sorted(f"- agent {n} fact {i}" for n in range(4) for i in range(8))
    listed = git(ws, "rev-list", f"{before}..HEAD").split()
    assert sorted(listed) == sorted(sha for commits in made for sha in commits)  # 32, one each
    for number in range(4):
        bodies = git(
            ws, "log", f"{before}..HEAD", f"--grep=mcp client agent-{number} ", "--format=%H"
        )
        assert sorted(bodies.split()) == sorted(made[number])
    assert git(ws, "status", "--porcelain", "--untracked-files=no") == ""


async def test_writes_are_pushed_by_the_sync_like_any_other(tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    ws = await asyncio.to_thread(_with_remote, tmp_path, remote)
    async with connected(ws, tmp_path) as client:
        done = payload(await client.call_tool("memory_append", {"text": "- pushed from MCP"}))
    # the client hung up: the server made the push its write owed before it exited
    pushed = await asyncio.to_thread(_log, remote)
    assert done["commit"] in pushed


def _with_remote(home: Path, remote: Path) -> Path:
    subprocess.run(["git", "init", "--bare", "-q", "-b", "main", str(remote)], check=True)
    ws = seeded(home)
    added = cairn("remote", "add", str(remote), "--workspace", str(ws), home=home)
    assert added.returncode == 0, added.stderr + added.stdout
    return ws


def _log(remote: Path) -> list[str]:
    done = subprocess.run(
        ["git", "--git-dir", str(remote), "log", "--format=%H", "main"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.split()


def test_sigterm_stops_the_server_at_once_and_it_says_so(tmp_path: Path) -> None:
    ws = seeded(tmp_path)
    server = subprocess.Popen(
        [str(CAIRN), "mcp", "--workspace", str(ws)],
        stdin=subprocess.PIPE,  # held open: a client that is still there
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cairn_env(tmp_path, CAIRN_EMBEDDER="hash"),
        text=True,
    )
    assert server.stderr is not None and server.stdin is not None
    assert server.stderr.readline() == f"cairn mcp: serving {ws} over stdio\n"
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    server.stdin.write(json.dumps(initialize) + "\n")
    server.stdin.flush()
    assert server.stdout is not None and '"id":1' in server.stdout.readline()
    server.send_signal(signal.SIGTERM)
    assert server.wait(timeout=STOP_BOUND_S) == 0
    assert "cairn mcp: stopped (SIGTERM)" in server.stderr.read()


async def test_with_project_a_client_s_citations_are_hashed_and_checked(tmp_path: Path) -> None:
    """`cairn mcp --project DIR`: another agent's memory of its code goes stale visibly."""
    ws = seeded(tmp_path)
    project = tmp_path / "app"
    project.mkdir()
    (project / "Makefile").write_text("test:\n\tpytest -q\n")
    async with connected(ws, tmp_path, "--project", str(project)) as client:
        appended = payload(
            await client.call_tool("memory_append", {"text": "- tests: pytest (Makefile#L2)"})
        )
        (project / "Makefile").write_text("test:\n\ttox\n")
        found = payload(await client.call_tool("memory_search", {"query": "tests pytest"}))
        read = payload(await client.call_tool("memory_get", {"path": NOTE}))
    assert "citationsNotHashed" not in appended
    assert "Makefile#L2@" in (ws / NOTE).read_text()
    stale = "[stale: Makefile#L2 changed since this was written]"
    assert found["results"][0]["sourceChecks"] == [stale]
    assert read["sourceChecks"] == [stale]

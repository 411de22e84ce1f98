"""The project loop as a user runs it: `cairn run` on a project folder with the demo brain, the
approval policies headless, and `cairn tools` with a real MCP server (mcp-server-time)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from shell.memory.citations import refs
from tests.e2e.test_cli import cairn, events_of

README = """# calc

A tiny calculator.

## Development

Run the tests with `make test` before you push.
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "calc"
    folder.mkdir()
    (folder / "README.md").write_text(README, encoding="utf-8")
    (folder / "Makefile").write_text("test:\n\t@echo '3 passed'\n", encoding="utf-8")
    return folder


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def test_read_remember_run_and_recall_with_the_demo_brain(project: Path, tmp_path: Path) -> None:
    ws = str(tmp_path / "ws")
    common = ("run", "--demo", "--workspace", ws, "--project", str(project))

    learned = cairn(*common, "read README.md and remember how to run the tests", home=tmp_path)
    events = events_of(learned)
    assert learned.returncode == 0, learned.stderr
    assert [e["name"] for e in of_type(events, "tool_call_started")] == [
        "read_file",
        "memory_append",
    ]
    [written] = of_type(events, "memory_written")
    assert written["commit"]
    note = (Path(ws) / written["path"]).read_text(encoding="utf-8")
    hashed = refs.digest([README.splitlines()[6]])  # what line 7 said, recorded by the door
    assert f"`make test` (source: README.md#L7@{hashed})" in note

    denied = events_of(cairn(*common, "run the tests", home=tmp_path))
    [decision] = of_type(denied, "approval_decided")
    assert decision["by"] == "headless" and not decision["allowed"]
    assert "--allow 'run_command:make*'" in decision["reason"]
    assert not of_type(denied, "command_finished")

    ran = events_of(cairn(*common, "--allow", "run_command:make*", "run the tests", home=tmp_path))
    [decision] = of_type(ran, "approval_decided")
    assert decision["by"] == "rule" and decision["allowed"]
    [finished] = of_type(ran, "command_finished")
    assert finished["exit_code"] == 0 and finished["command"] == "make test"
    assert "3 passed" in "".join(e["text"] for e in of_type(ran, "command_output"))
    assert "`make test` passed" in of_type(ran, "assistant_message")[-1]["text"]

    asked = events_of(cairn(*common, "how do I run the tests here?", home=tmp_path))
    answer = of_type(asked, "assistant_message")[-1]["text"]
    assert "make test" in answer and f"Source: {written['path']}#L" in answer
    [search] = of_type(asked, "search_performed")
    checks = [c for hit in search["hits"] for c in hit["citations"]]
    assert {"citation": "README.md#L7", "mark": "fresh"}.items() <= checks[0].items()


def test_cairn_tools_lists_project_and_mcp_tools(project: Path, tmp_path: Path) -> None:
    config = tmp_path / "none.toml"  # the config file `cairn(…, home=tmp_path)` points to
    server = json.dumps(sys.executable)
    config.write_text(
        '[tools]\nallow = ["run_command:make*"]\n'
        f'[mcp.time]\ncommand = {server}\nargs = ["-m", "mcp_server_time", '
        '"--local-timezone", "UTC"]\n'
        '[mcp.broken]\ncommand = "/nonexistent/mcp-server"\n',
        encoding="utf-8",
    )
    listed = cairn(
        "tools",
        "--json",
        "--workspace",
        str(tmp_path / "ws"),
        "--project",
        str(project),
        home=tmp_path,
    )
    assert listed.returncode == 1  # a server failed to start: said, and the exit code tells
    listing = json.loads(listed.stdout)
    tools = {tool["name"]: tool for tool in listing["tools"]}
    assert tools["read_file"]["approval"] == "free"
    assert tools["edit_file"]["approval"] == "ask"
    assert tools["memory_append"]["risk"] == "memory"
    assert tools["time__get_current_time"]["source"] == "mcp:time"
    assert tools["time__get_current_time"]["approval"] == "ask"
    servers = {server["name"]: server for server in listing["servers"]}
    assert servers["time"]["state"] == "ready"
    assert servers["broken"]["state"] == "failed" and servers["broken"]["detail"]
    assert listing["project"] == str(project.resolve())


def test_only_the_commands_that_run_an_agent_look_at_the_project_folder(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-project"
    ws = str(tmp_path / "ws")

    seeded = cairn("--project", str(missing), "init", ws, home=tmp_path)
    refused = cairn("tools", "--workspace", ws, "--project", str(missing), home=tmp_path)

    assert seeded.returncode == 0, seeded.stderr
    assert (refused.returncode, refused.stderr) == (
        2,
        f"cairn: error: --project {missing} is not a folder\n",
    )

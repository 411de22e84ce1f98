"""Who a `cairn mcp` call comes from, as its commit says it and the history reads it back; and
what the server says on stderr (never memory text)."""

from __future__ import annotations

import pytest

from shell.events import McpCallServed, MemoryWritten, SearchHit, SearchPerformed
from shell.git.history import commit_kind
from shell.git.store import CommitInfo
from shell.headless.mcp import served_line
from shell.mcp_server.origin import client


@pytest.mark.parametrize(
    ("name", "version", "origin"),
    [
        ("claude-code", "2.0.1", "mcp client claude-code 2.0.1 over stdio"),
        ("opencode", None, "mcp client opencode over stdio"),
        (None, None, "mcp client unnamed over stdio"),
        ("  ", "", "mcp client unnamed over stdio"),
        ("a\nsession x turn 3", "1\n2", "mcp client a_session_x_turn_3 1_2 over stdio"),
        ("\x1b]52;c;aGk=\x07ok", "1", "mcp client 52_c_aGk_ok 1 over stdio"),
        ("x" * 500, "v" * 500, f"mcp client {'x' * 64} {'v' * 32} over stdio"),
        (7, ["1"], "mcp client unnamed over stdio"),
    ],
)
def test_a_clients_name_becomes_one_short_token(name: object, version: object, origin: str) -> None:
    assert client(name, version, "stdio").origin == origin


def test_the_history_reads_the_client_back_and_no_session_from_it() -> None:
    from shell.git.history_commit import history_commit

    body = "memory(mcp): append 1 line to memory/2026-12-01.md\n\nmcp client opencode 1 over http"
    info = CommitInfo("a" * 40, "aaaaaaa", body, "2026-12-01T09:30:00+00:00", ["memory/x.md"])
    commit = history_commit(info)
    assert (commit.kind, commit.client, commit.session, commit.turn) == (
        "mcp",
        "opencode",
        None,
        None,
    )
    assert commit_kind("memory(tool): append 1 line to memory/x.md") == "tool"
    assert commit.as_json()["client"] == "opencode"


def test_what_the_server_says_names_no_memory_text() -> None:
    hit = SearchHit("memory/x.md", 1, 1, 0.9, 0.9, 0.5, "- a secret plan", "memory/x.md#L1")
    assert served_line(SearchPerformed(query="the plan", mode="hybrid", hits=[hit])) is None
    written = MemoryWritten("memory/x.md", 20, "abcdef1234", "mcp", lines_added=1)
    assert served_line(written) == "memory/x.md written (mcp, +1 line) → abcdef1"
    served = McpCallServed("opencode", "stdio", "memory_get", "no such file", 3.2)
    assert served_line(served) == "opencode called memory_get (3 ms): no such file"

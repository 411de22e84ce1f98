"""The model-facing memory tools, called the way the agent loop calls them: `Tool.call` with
raw (untrusted) arguments, against a real workspace and git repository."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from shell.events import GitLockCleared, MemoryWritten, Notice
from shell.git.store import GitStore
from shell.memory.files.door import MemoryFiles
from shell.memory.tools import memory_tools, pinned_append_tool
from shell.tools.toolbox import Tool, Toolbox, ToolResult
from tests.git_read import commit, commits

FIXED = datetime(2026, 11, 30, 9, 15, tzinfo=UTC)


@pytest.fixture
def tool_root(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "AGENTS.md").write_text("# rules\n")
    return root


@pytest.fixture
def tool_files(tool_root: Path) -> MemoryFiles:
    return MemoryFiles(tool_root, GitStore(tool_root, clock=lambda: FIXED))


@pytest.fixture
def day() -> list[str]:
    return ["2026-11-30"]


@pytest.fixture
def toolbox(tool_files: MemoryFiles, day: list[str]) -> Toolbox:
    return Toolbox(
        memory_tools(tool_files, today=lambda: day[0], origin=lambda: "session 3f2a turn 4")
    )


def ok(result: ToolResult) -> dict[str, Any]:
    assert result.error is None, result.error
    return json.loads(result.content)


def test_three_tools_with_strict_bounded_schemas(toolbox: Toolbox) -> None:
    tools = {tool.name: tool for tool in toolbox}
    assert list(tools) == ["memory_get", "memory_append", "memory_write"]
    for tool in tools.values():
        assert tool.parameters["additionalProperties"] is False
        assert tool.schema()["function"]["description"]
    get = tools["memory_get"].parameters
    assert get["required"] == ["path"]
    assert get["properties"]["from"]["minimum"] == 1
    assert (get["properties"]["lines"]["minimum"], get["properties"]["lines"]["maximum"]) == (
        1,
        2000,
    )
    assert tools["memory_append"].parameters["properties"]["text"]["minLength"] == 1
    assert tools["memory_write"].parameters["required"] == ["path", "content"]


async def test_append_defaults_to_todays_note_and_reports_events(
    toolbox: Toolbox, tool_root: Path, day: list[str]
) -> None:
    result = await toolbox.call("memory_append", '{"text": "- likes tea\\n- likes tea"}')
    payload = ok(result)
    assert payload["path"] == "memory/2026-11-30.md"
    assert (payload["appended"], payload["skippedDuplicates"]) == (1, 1)
    head = commit(tool_root)
    assert payload["commit"] == head.sha
    assert head.message == (
        "memory(tool): append 1 line to memory/2026-11-30.md\n\nsession 3f2a turn 4\n"
    )
    (event,) = result.events
    assert isinstance(event, MemoryWritten)
    assert (event.path, event.reason, event.commit) == (payload["path"], "tool", head.sha)

    day[0] = "2026-12-01"
    again = ok(await toolbox.call("memory_append", {"text": "- new day"}))
    assert again["path"] == "memory/2026-12-01.md"


async def test_second_identical_append_adds_nothing(toolbox: Toolbox, tool_root: Path) -> None:
    await toolbox.call("memory_append", {"text": "- a", "path": "memory/x.md"})
    payload = ok(await toolbox.call("memory_append", {"text": "- a", "path": "memory/x.md"}))
    assert payload == {"path": "memory/x.md", "appended": 0, "skippedDuplicates": 1, "commit": None}
    assert len(commits(tool_root)) == 1


async def test_the_same_fact_worded_with_a_stop_a_bullet_or_a_capital_adds_nothing(
    toolbox: Toolbox, tool_root: Path
) -> None:
    """A small model's turn keeps "- My sister lives in Tromsø" and its flush later writes
    "My sister lives in Tromsø." (bench/real_server, SmolLM2): one fact, one line."""
    await toolbox.call(
        "memory_append", {"text": "- My sister lives in Tromsø", "path": "memory/x.md"}
    )
    said_again = "My sister lives in Tromsø.\n- my sister lives in tromsø!\n- She moved in 2024."
    payload = ok(await toolbox.call("memory_append", {"text": said_again, "path": "memory/x.md"}))
    assert (payload["appended"], payload["skippedDuplicates"]) == (1, 2)
    assert (tool_root / "memory/x.md").read_text(encoding="utf-8").splitlines() == [
        "- My sister lives in Tromsø",
        "- She moved in 2024.",
    ]


async def test_get_reads_bounded_ranges_with_next_from(toolbox: Toolbox, tool_root: Path):
    (tool_root / "MEMORY.md").write_text("".join(f"fact {n}\n" for n in range(1, 301)))
    first = ok(await toolbox.call("memory_get", {"path": "MEMORY.md"}))
    assert (first["from"], first["lines"], first["totalLines"], first["nextFrom"]) == (
        1,
        120,
        300,
        121,
    )
    assert first["note"] == "[More content available. Use from=121 to continue.]"
    last = ok(await toolbox.call("memory_get", {"path": "MEMORY.md", "from": 281, "lines": 50}))
    assert last["text"].splitlines() == [f"fact {n}" for n in range(281, 301)]
    assert "nextFrom" not in last and "note" not in last


async def test_get_past_the_end_says_so_as_read_file_does(toolbox: Toolbox, tool_root: Path):
    (tool_root / "MEMORY.md").write_text("".join(f"fact {n}\n" for n in range(1, 11)))
    past = ok(await toolbox.call("memory_get", {"path": "MEMORY.md", "from": 50}))
    assert (past["text"], past["lines"], past["totalLines"]) == ("", 0, 10)
    assert past["note"] == "[from is past the end: the file has 10 lines.]"


async def test_get_caps_at_12000_chars(toolbox: Toolbox, tool_root: Path) -> None:
    (tool_root / "MEMORY.md").write_text(("z" * 499 + "\n") * 100)
    payload = ok(await toolbox.call("memory_get", {"path": "MEMORY.md", "lines": 2000}))
    assert len(payload["text"]) <= 12_000
    assert payload["lines"] == 24 and payload["nextFrom"] == 25


async def test_get_missing_file_is_empty(toolbox: Toolbox) -> None:
    payload = ok(await toolbox.call("memory_get", {"path": "memory/1999-01-01.md"}))
    assert (payload["text"], payload["totalLines"]) == ("", 0)


async def test_write_after_read_then_stale_refusal(toolbox: Toolbox, tool_root: Path) -> None:
    (tool_root / "MEMORY.md").write_text("old\n")
    refused = await toolbox.call("memory_write", {"path": "MEMORY.md", "content": "new"})
    assert refused.error is not None and "memory_get it first" in refused.error
    assert refused.events == ()

    await toolbox.call("memory_get", {"path": "MEMORY.md"})
    result = await toolbox.call("memory_write", {"path": "MEMORY.md", "content": "new"})
    payload = ok(result)
    assert payload["path"] == "MEMORY.md" and payload["bytes"] == 4
    assert payload["commit"] == commit(tool_root).sha
    outside, written = result.events  # "old" was written outside Cairn: committed on its own
    assert isinstance(outside, MemoryWritten) and outside.outside_edit
    assert isinstance(written, MemoryWritten) and not written.outside_edit

    (tool_root / "MEMORY.md").write_text("edited outside\n")
    stale = await toolbox.call("memory_write", {"path": "MEMORY.md", "content": "newer"})
    assert stale.error is not None
    assert "changed on disk since you read it; memory_get it again first" in stale.error
    assert (tool_root / "MEMORY.md").read_text() == "edited outside\n"


async def test_write_reports_a_cleared_stale_lock(toolbox: Toolbox, tool_root: Path) -> None:
    await toolbox.call("memory_append", {"text": "- a"})
    lock = tool_root / ".git" / "index.lock"
    lock.write_text("")
    os.utime(lock, (0, 0))
    result = await toolbox.call("memory_write", {"path": "memory/new.md", "content": "- b"})
    assert ok(result)["commit"] is not None
    assert [type(e) for e in result.events] == [GitLockCleared, MemoryWritten]


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("memory_get", {"path": "/etc/passwd"}, "absolute"),
        ("memory_get", {"path": "../x.md"}, "'..'"),
        ("memory_get", {"path": "memory/../AGENTS.md"}, "'..'"),
        ("memory_get", {"path": "AGENTS.md"}, "not a memory file"),
        ("memory_get", {"path": ".git/config"}, "not a memory file"),
        ("memory_write", {"path": "SOUL.md", "content": "x"}, "not a memory file"),
        ("memory_write", {"path": "DREAMS.md", "content": "x"}, "not a memory file"),
        ("memory_append", {"text": "x", "path": "memory/x.txt"}, "not a Markdown file"),
        ("memory_get", {"path": ""}, "invalid argument path"),
        ("memory_get", {"path": 7}, "invalid argument path"),
        ("memory_get", {"path": "MEMORY.md", "from": 0}, "invalid argument from"),
        ("memory_get", {"path": "MEMORY.md", "from": "2"}, "invalid argument from"),
        ("memory_get", {"path": "MEMORY.md", "lines": 2001}, "invalid argument lines"),
        ("memory_get", {"path": "MEMORY.md", "lines": True}, "invalid argument lines"),
        ("memory_get", {}, "'path' is a required property"),
        ("memory_get", {"path": "MEMORY.md", "offset": 3}, "Additional properties"),
        ("memory_append", {}, "'text' is a required property"),
        ("memory_append", {"text": ""}, "invalid argument text"),
        ("memory_append", {"text": ["a"]}, "invalid argument text"),
        ("memory_write", {"path": "MEMORY.md"}, "'content' is a required property"),
        ("memory_write", {"path": "MEMORY.md", "content": None}, "invalid argument content"),
        ("memory_write", '{"path": "MEMORY.md", "content": ', "not valid JSON"),
        ("memory_append", '["- a"]', "must be a JSON object"),
    ],
)
async def test_bad_arguments_become_clear_tool_errors(
    toolbox: Toolbox, tool_root: Path, tool: str, arguments: Any, expected: str
) -> None:
    result = await toolbox.call(tool, arguments)
    assert result.error is not None and expected in result.error
    assert result.content.startswith("Error: ")
    assert result.events == ()
    assert not (tool_root / "MEMORY.md").exists()
    assert (tool_root / "AGENTS.md").read_text() == "# rules\n"


async def test_oversized_write_is_a_tool_error(toolbox: Toolbox, tool_root: Path) -> None:
    result = await toolbox.call("memory_write", {"path": "MEMORY.md", "content": "x" * 64_001})
    assert result.error is not None and "at most 64000 bytes" in result.error
    assert not (tool_root / "MEMORY.md").exists()


async def test_pinned_append_only_writes_its_target(tool_files: MemoryFiles, tool_root: Path):
    tool = pinned_append_tool(tool_files, "memory/2026-11-30.md", origin=lambda: "flush c1")
    assert isinstance(tool, Tool) and tool.name == "memory_append"
    assert "memory/2026-11-30.md" in tool.description

    refused = await tool.call({"text": "- x", "path": "MEMORY.md"})
    assert refused.error == (
        "Memory flush writes are restricted to memory/2026-11-30.md; use that path only."
    )
    other_day = await tool.call({"text": "- x", "path": "memory/2026-12-01.md"})
    assert other_day.error is not None and "restricted to" in other_day.error
    escape = await tool.call({"text": "- x", "path": "../../etc/passwd"})
    assert escape.error is not None and "restricted to" in escape.error
    assert not (tool_root / "MEMORY.md").exists()

    default = ok(await tool.call({"text": "- flushed fact"}))
    explicit = ok(await tool.call({"text": "- second", "path": "./memory/2026-11-30.md"}))
    assert default["path"] == explicit["path"] == "memory/2026-11-30.md"
    assert (tool_root / "memory/2026-11-30.md").read_text() == "- flushed fact\n- second\n"
    head = commit(tool_root)
    assert head.message.startswith("memory(flush): append 1 line to memory/2026-11-30.md")
    assert head.message.endswith("\n\nflush c1\n")


@pytest.mark.parametrize(
    "path", ["memory/YYYY-MM-DD.md", "YYYY-MM-DD/notes.md", "2026-11-30", "2026-11-30.md", ""]
)
async def test_the_placeholder_date_a_small_model_copies_means_todays_note(
    toolbox: Toolbox, tool_files: MemoryFiles, tool_root: Path, path: str
) -> None:
    """Qwen2.5-Coder-1.5B copies `memory/YYYY-MM-DD.md` from the descriptions as written
    (tests/fakes/recorded/), names the day alone, or sends an empty path when told to leave it
    out: each means today's note, where a path-less append goes."""
    appended = ok(await toolbox.call("memory_append", {"text": "- deploy Fridays", "path": path}))
    assert appended["path"] == "memory/2026-11-30.md" and appended["appended"] == 1
    read = ok(await toolbox.call("memory_get", {"path": path.lower() or "2026-11-30"}))
    assert read["path"] == "memory/2026-11-30.md" and "- deploy Fridays" in read["text"]
    assert sorted(p.name for p in (tool_root / "memory").iterdir()) == ["2026-11-30.md"]
    pinned = pinned_append_tool(tool_files, "memory/2026-11-30.md", origin=lambda: "flush c1")
    assert ok(await pinned.call({"text": "- flushed", "path": path}))["appended"] == 1
    assert (tool_root / "memory/2026-11-30.md").read_text() == "- deploy Fridays\n- flushed\n"


async def test_a_note_with_a_nul_byte_edited_outside_is_committed_with_a_warning(
    toolbox: Toolbox, tool_root: Path
) -> None:
    note = tool_root / "memory" / "2026-12-02.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_bytes(b"- pasted from a binary\x00 file\n")

    result = await toolbox.call(
        "memory_append", {"path": str(note.relative_to(tool_root)), "text": "- mine"}
    )

    outside, warning, written = result.events
    assert isinstance(outside, MemoryWritten) and outside.outside_edit and outside.commit
    assert isinstance(warning, Notice) and warning.level == "warning"
    assert "memory/2026-12-02.md" in warning.message and "NUL bytes" in warning.message
    assert isinstance(written, MemoryWritten) and not written.outside_edit

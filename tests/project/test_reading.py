"""read_file: bounded windows with a continuation, kept outputs, and the paths it refuses.
Real files in a temporary project folder."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from shell.tools.project.files import file_tools
from shell.tools.project.outputs import OutputStore
from shell.tools.project.root import ProjectRoot
from shell.tools.toolbox import CallContext, Tool, ToolResult


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def outputs(tmp_path: Path) -> OutputStore:
    return OutputStore(tmp_path / "outputs")


@pytest.fixture
def read_file(project: Path, outputs: OutputStore) -> Tool:
    tools = {tool.name: tool for tool in file_tools(ProjectRoot(project), outputs)}
    return tools["read_file"]


async def call(tool: Tool, **arguments: Any) -> ToolResult:
    return await tool.call(arguments, context=CallContext(call_id="call_1"))


async def read(tool: Tool, **arguments: Any) -> dict[str, Any]:
    result = await call(tool, **arguments)
    assert result.error is None, result.error
    payload: dict[str, Any] = json.loads(result.content)
    return payload


async def test_a_window_of_lines_with_a_continuation(project: Path, read_file: Tool) -> None:
    (project / "src").mkdir()
    (project / "src" / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 501)))

    first = await read(read_file, path="src/long.txt")
    assert first["path"] == "src/long.txt"
    assert first["from"] == 1 and first["lines"] == 200 and first["totalLines"] == 500
    assert first["text"].splitlines()[0] == "line 1" and first["text"].endswith("line 200")
    assert first["nextFrom"] == 201 and "from=201" in first["note"]

    last = await read(read_file, path="src/long.txt", **{"from": 401, "lines": 2000})
    assert last["lines"] == 100 and last["text"].endswith("line 500")
    assert "nextFrom" not in last and "note" not in last


async def test_a_read_stops_early_when_the_text_is_long(project: Path, read_file: Tool) -> None:
    (project / "wide.txt").write_text(("x" * 1000 + "\n") * 100)

    window = await read(read_file, path="wide.txt", lines=100)

    assert 0 < window["lines"] < 100 and len(window["text"]) <= 24_000
    assert window["nextFrom"] == window["lines"] + 1
    rest = await read(read_file, path="wide.txt", **{"from": window["nextFrom"]})
    assert rest["from"] == window["nextFrom"]


async def test_a_lone_huge_line_is_cut_and_the_next_line_follows(
    project: Path, read_file: Tool
) -> None:
    (project / "min.js").write_text("y" * 100_000 + "\nafter\n")

    window = await read(read_file, path="min.js")

    assert window["lines"] == 1 and window["lineCut"] is True and len(window["text"]) == 24_000
    assert window["nextFrom"] == 2


async def test_crlf_lines_read_without_their_carriage_returns(
    project: Path, read_file: Tool
) -> None:
    (project / "dos.txt").write_bytes(b"one\r\ntwo\r\n")

    assert (await read(read_file, path="dos.txt"))["text"] == "one\ntwo"


async def test_a_kept_output_reads_the_same_way(read_file: Tool, outputs: OutputStore) -> None:
    ref = outputs.keep("call_9", "".join(f"out {n}\n" for n in range(1, 301)))

    first = await read(read_file, path=ref, lines=100)
    assert first["path"] == "output:call_9" and first["nextFrom"] == 101
    more = await read(read_file, path=ref, **{"from": 101, "lines": 500})
    assert more["text"].endswith("out 300") and "nextFrom" not in more

    missing = await call(read_file, path="output:nope")
    assert missing.error is not None and "no output is kept" in missing.error


@pytest.mark.parametrize(
    ("given", "reason"),
    [
        ("../outside.txt", "outside the project"),
        ("sub/../../outside.txt", "outside the project"),
        ("/etc/hostname", "outside the project"),
        ("escape/secret.txt", "outside the project"),  # a symlinked folder pointing out
        ("link.txt", "outside the project"),  # a symlinked file pointing out
        ("bad\x00.txt", "NUL"),
        ("", "invalid argument"),
        ("missing.txt", "does not exist"),
        ("sub", "is a folder"),
        ("blob.bin", "binary"),
    ],
)
async def test_refusals(project: Path, read_file: Tool, given: str, reason: str) -> None:
    outside = project.parent / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("classified-words\n")
    (project.parent / "outside.txt").write_text("outside\n")
    (project / "escape").symlink_to(outside, target_is_directory=True)
    (project / "link.txt").symlink_to(outside / "secret.txt")
    (project / "sub").mkdir()
    (project / "blob.bin").write_bytes(b"PNG\x00\x01\x02" + b"text" * 10)

    result = await call(read_file, path=given)

    assert result.error is not None and reason in result.error
    assert "classified-words" not in result.content


async def test_a_symlink_that_stays_inside_reads_its_target(project: Path, read_file: Tool) -> None:
    (project / "real.txt").write_text("real\n")
    (project / "alias.txt").symlink_to(project / "real.txt")

    window = await read(read_file, path="alias.txt")

    assert window["path"] == "real.txt" and window["text"] == "real"


async def test_invalid_bounds_are_refused_by_the_schema(project: Path, read_file: Tool) -> None:
    (project / "a.txt").write_text("a\n")

    for bounds in ({"from": 0}, {"lines": 0}, {"lines": 2001}, {"from": "1"}):
        result = await call(read_file, path="a.txt", **bounds)
        assert result.error is not None and "invalid argument" in result.error


async def test_a_named_pipe_is_refused_not_waited_on(project: Path, read_file: Tool) -> None:
    os.mkfifo(project / "pipe")

    result = await call(read_file, path="pipe")

    assert result.error is not None and "not a regular file" in result.error

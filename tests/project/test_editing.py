"""edit_file and write_file: read before write, refused when the file changed since, the diff
the user approves and the FileEdited fact; and fuzzed arguments for all five file tools."""

from __future__ import annotations

import asyncio
import builtins
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shell.events import FileEdited
from shell.tools.project.files import file_tools
from shell.tools.project.outputs import OutputStore
from shell.tools.project.root import ProjectRoot
from shell.tools.toolbox import CallContext, Tool, Toolbox, ToolError, ToolResult


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / "memory").mkdir(parents=True)
    (folder / ".git").mkdir()
    (folder / "README.md").write_text("# Title\n\nold line\nsame\n")
    return folder


@pytest.fixture
def tools(project: Path) -> dict[str, Tool]:
    root = ProjectRoot(project, protected=[project / "memory"])
    return {t.name: t for t in file_tools(root, OutputStore(project.parent / "out"))}


async def call(tool: Tool, **arguments: Any) -> ToolResult:
    return await tool.call(arguments, context=CallContext(call_id="call_7"))


async def read(tools: dict[str, Tool], path: str) -> None:
    assert (await call(tools["read_file"], path=path)).error is None


async def test_an_edit_needs_a_read_first(project: Path, tools: dict[str, Tool]) -> None:
    refused = await call(tools["edit_file"], path="README.md", old="old line", new="new line")
    assert refused.error is not None and "read it first" in refused.error

    await read(tools, "README.md")
    done = await call(tools["edit_file"], path="README.md", old="old line", new="new line")

    assert done.error is None
    assert (project / "README.md").read_text() == "# Title\n\nnew line\nsame\n"
    assert json.loads(done.content) == {
        "path": "README.md",
        "added": 1,
        "removed": 1,
        "created": False,
    }
    (event,) = done.events
    assert isinstance(event, FileEdited) and event.call_id == "call_7"
    assert event.path == "README.md" and not event.created
    assert "-old line" in event.diff and "+new line" in event.diff
    assert event.diff.startswith("--- a/README.md\n+++ b/README.md")


async def test_consecutive_edits_need_no_new_read(project: Path, tools: dict[str, Tool]) -> None:
    await read(tools, "README.md")
    for old, new in [("old line", "second"), ("second", "third"), ("same", "other")]:
        result = await call(tools["edit_file"], path="README.md", old=old, new=new)
        assert result.error is None, result.error

    assert (project / "README.md").read_text() == "# Title\n\nthird\nother\n"


async def test_a_file_changed_since_the_read_is_refused(
    project: Path, tools: dict[str, Tool]
) -> None:
    await read(tools, "README.md")
    (project / "README.md").write_text("# Title\n\nold line\nsame\nsomeone else's line\n")

    for name, arguments in [
        ("edit_file", {"old": "old line", "new": "new"}),
        ("write_file", {"content": "all new\n"}),
    ]:
        refused = await call(tools[name], path="README.md", **arguments)
        assert refused.error is not None and "changed since you read it" in refused.error
        with pytest.raises(ToolError, match="read it again"):
            assert tools[name].preview is not None
            await tools[name].preview({"path": "README.md", **arguments})
    assert "someone else's line" in (project / "README.md").read_text()

    await read(tools, "README.md")
    assert (await call(tools["edit_file"], path="README.md", old="old line", new="x")).error is None


async def test_write_file_creates_a_new_file_and_its_folders(
    project: Path, tools: dict[str, Tool]
) -> None:
    assert tools["write_file"].preview is not None
    preview = await tools["write_file"].preview({"path": "src/new/mod.py", "content": "a\nb\n"})
    assert preview.summary == "create src/new/mod.py (+2)" and preview.subject == "src/new/mod.py"

    done = await call(tools["write_file"], path="src/new/mod.py", content="a\nb\n")

    assert done.error is None and (project / "src/new/mod.py").read_text() == "a\nb\n"
    (event,) = done.events
    assert isinstance(event, FileEdited) and event.created and event.added == 2
    assert event.diff.startswith("--- /dev/null\n+++ b/src/new/mod.py")
    again = await call(tools["edit_file"], path="src/new/mod.py", old="b", new="c")
    assert again.error is None  # what it wrote counts as read


async def test_write_file_over_an_existing_file_needs_a_read(
    project: Path, tools: dict[str, Tool]
) -> None:
    refused = await call(tools["write_file"], path="README.md", content="gone\n")
    assert refused.error is not None and "read it first" in refused.error

    await read(tools, "README.md")
    assert (await call(tools["write_file"], path="README.md", content="new\n")).error is None
    assert (project / "README.md").read_text() == "new\n"


async def test_old_must_occur_exactly_once(project: Path, tools: dict[str, Tool]) -> None:
    (project / "twice.txt").write_text("a\nrepeat\nb\nrepeat\n")
    await read(tools, "twice.txt")

    missing = await call(tools["edit_file"], path="twice.txt", old="absent", new="x")
    assert missing.error is not None and "occurs 0 times" in missing.error
    several = await call(tools["edit_file"], path="twice.txt", old="repeat", new="x")
    assert several.error is not None and "occurs 2 times" in several.error
    assert "lines 2, 4" in several.error and "replace_all" in several.error
    assert (project / "twice.txt").read_text() == "a\nrepeat\nb\nrepeat\n"

    every = await call(
        tools["edit_file"], path="twice.txt", old="repeat", new="x", replace_all=True
    )
    assert every.error is None and (project / "twice.txt").read_text() == "a\nx\nb\nx\n"
    assert json.loads(every.content)["removed"] == 2


async def test_the_preview_shows_the_diff(tools: dict[str, Tool]) -> None:
    await read(tools, "README.md")
    assert tools["edit_file"].preview is not None

    preview = await tools["edit_file"].preview(
        {"path": "README.md", "old": "old line\n", "new": "one\ntwo\n"}
    )

    assert preview.summary == "edit README.md (+2 −1)" and preview.subject == "README.md"
    assert preview.diff is not None and "+one\n+two" in preview.diff
    with pytest.raises(ToolError, match="occurs 0 times"):
        await tools["edit_file"].preview({"path": "README.md", "old": "nope", "new": "x"})


async def test_a_huge_diff_is_bounded(project: Path, tools: dict[str, Tool]) -> None:
    done = await call(tools["write_file"], path="big.txt", content="line\n" * 5000)

    (event,) = done.events
    assert isinstance(event, FileEdited) and event.added == 5000
    assert len(event.diff.splitlines()) <= 301 and "more diff lines" in event.diff


async def test_newlines_and_bytes_are_kept_and_the_exec_bit_is_dropped_and_said(
    project: Path, tools: dict[str, Tool]
) -> None:
    script = project / "run.sh"
    script.write_bytes(b"#!/bin/sh\r\necho old\r\n\xff raw byte\r\n")
    script.chmod(0o4755)
    await read(tools, "run.sh")
    edit = {"path": "run.sh", "old": "echo old\n", "new": "echo a\necho b\n"}

    assert tools["edit_file"].preview is not None
    preview = await tools["edit_file"].preview(edit)
    done = await call(tools["edit_file"], **edit)

    assert "no longer be executable" in preview.summary
    assert done.error is None
    assert script.read_bytes() == b"#!/bin/sh\r\necho a\r\necho b\r\n\xff raw byte\r\n"
    assert script.stat().st_mode & 0o7777 == 0o644  # no exec, no setuid: a person must chmod
    note = json.loads(done.content)["note"]
    assert "was executable (mode 4755)" in note and "(mode 644)" in note and "chmod" in note
    rewritten = await call(tools["write_file"], path="run.sh", content="one\ntwo\n")
    assert rewritten.error is None and script.read_bytes() == b"one\r\ntwo\r\n"
    assert "note" not in json.loads(rewritten.content)


async def test_a_written_file_keeps_its_other_bits_and_a_new_one_follows_the_umask(
    project: Path, tools: dict[str, Tool]
) -> None:
    secret = project / "private.txt"
    secret.write_text("mine\n")
    secret.chmod(0o600)
    await read(tools, "private.txt")
    umask = os.umask(0o027)
    try:
        assert (await call(tools["write_file"], path="private.txt", content="x\n")).error is None
        assert (await call(tools["write_file"], path="new/made.sh", content="x\n")).error is None
    finally:
        os.umask(umask)

    assert secret.stat().st_mode & 0o777 == 0o600
    assert (project / "new" / "made.sh").stat().st_mode & 0o777 == 0o640


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("../escape.txt", "outside the project"),
        ("/tmp/escape.txt", "outside the project"),
        ("link/escape.txt", "outside the project"),
        ("memory/note.md", "memory workspace"),
        (".git/config", ".git"),
        ("src/.git/hooks/x", ".git"),
    ],
)
async def test_writes_outside_or_into_protected_folders_are_refused(
    project: Path, tools: dict[str, Tool], path: str, reason: str
) -> None:
    (project / "link").symlink_to(project.parent, target_is_directory=True)

    result = await call(tools["write_file"], path=path, content="x\n")

    assert result.error is not None and reason in result.error
    assert not (project.parent / "escape.txt").exists()
    assert list((project / "memory").iterdir()) == []


HOSTILE_PATHS = [
    "../outside.txt",
    "/etc/passwd",
    "~/outside.txt",
    "link/outside.txt",
    "memory/x.md",
    ".git/HEAD",
    "README.md",
    "README.md\x00",
    "src",
    "output:nope",
    "output:",
    "a" * 5000,
    "",
    "loop/x",  # a symlink loop
    "a\ud800",  # a lone surrogate
]
VALUES = st.none() | st.booleans() | st.integers() | st.text(max_size=40) | st.floats()
PATHS = st.sampled_from(HOSTILE_PATHS) | st.text(max_size=30)
TEXT = st.text(max_size=60) | st.sampled_from(["# Title", "\n", "same\n", "x\ud800", "!"]) | VALUES
SHAPED = {
    "read_file": st.fixed_dictionaries({"path": PATHS}, optional={"from": VALUES, "lines": VALUES}),
    "list_files": st.fixed_dictionaries({}, optional={"glob": TEXT, "path": PATHS}),
    "grep": st.fixed_dictionaries(
        {"pattern": TEXT}, optional={"glob": TEXT, "path": PATHS, "ignore_case": VALUES}
    ),
    "edit_file": st.fixed_dictionaries(
        {"path": PATHS, "old": TEXT, "new": TEXT}, optional={"replace_all": VALUES}
    ),
    "write_file": st.fixed_dictionaries({"path": PATHS, "content": TEXT}),
}
CALLS = st.sampled_from(sorted(SHAPED)).flatmap(
    lambda name: st.tuples(st.just(name), SHAPED[name] | st.dictionaries(st.text(), VALUES))
)
BUG_PREFIXES = tuple(f"{n}: " for n in dir(builtins) if n.endswith(("Error", "Exception")))


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(Path(here, name)): Path(here, name).read_bytes()
        for here, _, names in os.walk(folder)
        for name in names
        if not Path(here, name).is_symlink()
    }


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(call=CALLS)
def test_fuzzed_arguments_get_a_result_and_never_write_where_they_may_not(
    tmp_path_factory: pytest.TempPathFactory, call: tuple[str, dict[str, Any]]
) -> None:
    base = tmp_path_factory.mktemp("fuzz")
    project, outside = base / "project", base / "outside"
    for folder in (project / "memory", project / ".git", project / "src", outside):
        folder.mkdir(parents=True)
    (project / "README.md").write_text("# Title\nsame\nsame\n")
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (project / "memory" / "x.md").write_text("memory\n")
    (outside / "outside.txt").write_text("outside\n")
    (project / "link").symlink_to(outside, target_is_directory=True)
    (project / "loop").symlink_to(project / "loop")
    root = ProjectRoot(project, protected=[project / "memory"])
    toolbox = Toolbox(file_tools(root, OutputStore(base / "out")))
    guarded = {**_snapshot(outside), **_snapshot(project / ".git"), **_snapshot(project / "memory")}
    name, arguments = call

    asyncio.run(toolbox.call("read_file", {"path": "README.md"}))
    result = asyncio.run(toolbox.call(name, arguments))

    assert isinstance(result.content, str) and result.content
    if result.error is not None:
        assert result.content.startswith("Error: ")
        assert not result.error.startswith(BUG_PREFIXES), result.error
    after = {**_snapshot(outside), **_snapshot(project / ".git"), **_snapshot(project / "memory")}
    assert after == guarded

"""Stale citations where a person or the model meets them: `cairn index --stale`, memory_get's
result, the model's own writes through the memory tools, and the composition root's project
(Cairn's own files reserved). Real workspace, real git, a project edited by a script."""

from __future__ import annotations

import asyncio
import io
import json
from dataclasses import replace
from pathlib import Path

import pytest

from shell import events as ev
from shell.build import build_agent
from shell.config import Settings
from shell.headless.search import stale_command
from shell.memory.citations import refs
from shell.memory.citations.project import citation_stamper
from shell.memory.files.door import MemoryFiles
from shell.memory.tools import memory_tools
from shell.tools.toolbox import CallContext
from shell.workspace import init_workspace
from tests.core.agent_helpers import collect, of, started
from tests.fakes.openai_script import Reply
from tests.fakes.openai_server import FakeOpenAI

README = "".join(f"step {n}: run make test-{n}\n" for n in range(1, 21))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "README.md").write_text(README)
    (folder / "setup.cfg").write_text("[tool]\nname = x\n")
    return folder


@pytest.fixture
def settings(demo_settings: Settings, project: Path) -> Settings:
    return replace(demo_settings, project=project)


@pytest.fixture
def files(settings: Settings) -> MemoryFiles:
    git = init_workspace(settings)
    return MemoryFiles(settings.workspace, git, citations=citation_stamper(settings))


def remember(files: MemoryFiles) -> None:
    files.append(
        "MEMORY.md",
        "- tests run with make test-3 (README.md#L3)\n"
        "- the tool is named in setup.cfg#L2\n"
        "- step five is `README.md#L5-L6`\n"
        "- no citation here",
        reason="tool",
    )
    files.append("memory/2026-11-30.md", "- step 19 matters (README.md#L19)", reason="tool")


def stale(settings: Settings, *, as_json: bool) -> str:
    out = io.StringIO()
    assert stale_command(settings, as_json=as_json, out=out) == 0
    return out.getvalue()


def test_index_stale_lists_only_the_lines_whose_citations_no_longer_hold(
    settings: Settings, files: MemoryFiles, project: Path
) -> None:
    remember(files)
    assert stale(settings, as_json=False).endswith("no longer hold: 0\n")
    (project / "README.md").write_text(README.replace("make test-5", "tox -e 5")[:-60])
    (project / "setup.cfg").unlink()
    rows = json.loads(stale(settings, as_json=True))["lines"]
    found = [(r["path"], r["line"], r["citation"], r["mark"]) for r in rows]
    memory = (settings.workspace / "MEMORY.md").read_text().splitlines()
    named = next(n for n, line in enumerate(memory, 1) if "setup.cfg#L2@" in line)
    assert found == [
        ("MEMORY.md", named, "setup.cfg#L2", "gone"),
        ("MEMORY.md", named + 1, "README.md#L5-L6", "stale"),
        ("memory/2026-11-30.md", 1, "README.md#L19", "gone"),
    ]
    assert [r["text"] for r in rows][1] == memory[named]
    text = stale(settings, as_json=False)
    assert f"MEMORY.md:{named + 1}  README.md#L5-L6  stale  README.md#L5-L6 changed" in text
    assert "README.md#L3 " not in text  # unchanged: fresh, not listed


def test_memory_get_gives_the_model_each_citation_s_mark(
    settings: Settings, files: MemoryFiles, project: Path
) -> None:
    remember(files)
    (project / "README.md").write_text("# moved down\n" + README)
    get = next(
        t
        for t in memory_tools(files, today=lambda: "2026-11-30", origin=str)
        if t.name == "memory_get"
    )
    result = asyncio.run(get.run({"path": "MEMORY.md"}, CallContext()))
    checks = json.loads(result.content)["sourceChecks"]
    assert checks[0] == (
        "[stale: README.md#L3 changed since this was written; the same lines are now at "
        "README.md#L4]"
    )
    assert checks[1].startswith("[fresh: setup.cfg#L2")


def test_the_model_s_write_says_which_citations_got_no_hash(files: MemoryFiles) -> None:
    append = next(
        t
        for t in memory_tools(files, today=lambda: "2026-11-30", origin=str)
        if t.name == "memory_append"
    )
    result = asyncio.run(
        append.run(
            {"text": "- passwd is at ../../../etc/passwd#L1, tests at README.md#L1"}, CallContext()
        )
    )
    payload = json.loads(result.content)
    assert payload["citationsNotHashed"] == [
        "../../../etc/passwd#L1: ../../../etc/passwd is outside the project folder"
    ]
    note = (files.root / "memory" / "2026-11-30.md").read_text()
    assert f"README.md#L1@{refs.digest(['step 1: run make test-1'])}" in note


def test_cairn_s_own_state_inside_the_project_is_never_hashed(
    demo_settings: Settings, tmp_path: Path
) -> None:
    """`cd ~; cairn`: the project folder holds the workspace and its state folder."""
    settings = replace(demo_settings, project=demo_settings.workspace.parent)
    git = init_workspace(settings)
    files = MemoryFiles(settings.workspace, git, citations=citation_stamper(settings))
    state = settings.state_dir.relative_to(settings.project)
    (settings.state_dir / "notes.txt").write_text("a private line\n")
    outcome = files.append("MEMORY.md", f"- see {state}/notes.txt#L1", reason="tool")
    assert "@" not in (settings.workspace / "MEMORY.md").read_text()
    assert "not readable by the model" in outcome.event.citations_unhashed[0]


def test_with_the_project_tools_off_nothing_of_the_project_is_hashed(
    settings: Settings, project: Path
) -> None:
    """A hash would tell the model whether a guess at a line it may not read is right."""
    off = replace(settings, tools=replace(settings.tools, project="off"))
    git = init_workspace(off)
    files = MemoryFiles(off.workspace, git, citations=citation_stamper(off))
    outcome = files.append("MEMORY.md", "- the name is in setup.cfg#L2", reason="tool")
    assert "@" not in (off.workspace / "MEMORY.md").read_text()
    assert outcome.event.citations_unhashed == ["setup.cfg#L2: no project is open"]


def test_the_agent_hashes_only_while_the_project_tools_are_offered(
    settings: Settings, project: Path
) -> None:
    """At a window too small for the project tools the model cannot read the files, so its
    citations get no hash; with the tools offered, they do."""
    small = build_agent(replace(settings, context_window=2_048), index_in_background=False)
    assert small.workbench.project is None
    files = small.lifecycle.files
    outcome = files.append("MEMORY.md", "- the name is in setup.cfg#L2", reason="tool")
    assert outcome.event.citations_unhashed == ["setup.cfg#L2: no project is open"]
    offered = build_agent(replace(settings, context_window=16_384), index_in_background=False)
    assert offered.workbench.project is not None
    outcome = offered.lifecycle.files.append("MEMORY.md", "- tests at README.md#L1", reason="tool")
    assert outcome.event.citations_unhashed == []
    assert "README.md#L1@" in (settings.workspace / "MEMORY.md").read_text()


async def test_a_model_citing_a_line_that_says_nothing_of_its_fact_gets_no_hash(
    fake_settings: Settings, fake_openai: FakeOpenAI, project: Path
) -> None:
    # the attack as Qwen made it by accident: a fact the user told, with the instructions'
    # example citation copied onto it (README line 16 here says "step 16: run make test-16")
    settings = replace(fake_settings, project=project, context_window=16_384)
    agent = await started(settings)
    fact = "- staging database lives on db-stage-3.internal, port 5433 (README.md#L16)"
    call = json.dumps({"text": fact, "path": "MEMORY.md"})
    fake_openai.enqueue(Reply(tool_calls=[("c1", "memory_append", call)]), Reply(text="Saved."))
    events = await collect(agent.submit("remember: staging is db-stage-3.internal, port 5433"))
    [written] = of(events, ev.MemoryWritten)
    assert written.citations_unhashed == [
        "README.md#L16: its lines say none of this line's words; cite the lines that say it"
    ]
    memories = [path.read_text() for path in settings.workspace.parent.rglob("MEMORY.md")]
    assert [text for text in memories if fact in text.splitlines()]  # written, with no hash
    result = json.loads(fake_openai.requests[-1]["messages"][-1]["content"])
    assert result["citationsNotHashed"] == written.citations_unhashed
    await agent.aclose()

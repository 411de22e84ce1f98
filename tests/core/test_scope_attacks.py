"""Attacks on the scopes: a model that names a scope or a path reaching another project's
memory, a project folder that is a symlink to another, a project memory replaced by a symlink
to another's; and the `[scopes] share` setting, the one way a project reads another's, which
still never lets a secret cross."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from shell.agent import Agent
from shell.build import build_agent
from shell.config import ConfigError, ScopeSettings, Settings, ToolSettings
from shell.scopes.scopes import Scope, session_scopes
from shell.tools.toolbox import ToolResult
from tests.core.agent_helpers import collect

TOKEN = "ghp_" + "Att4" * 9


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "code" / "heron", tmp_path / "code" / "osprey"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    return a, b


def in_project(settings: Settings, folder: Path, **changes: Any) -> Settings:
    return replace(settings, project=folder, tools=ToolSettings(project="off"), **changes)


async def agent_in(settings: Settings) -> Agent:
    agent = build_agent(settings, index_in_background=False, interactive=False)
    await collect(agent.start())
    return agent


async def call(agent: Agent, name: str, **arguments: object) -> ToolResult:
    tool = {tool.name: tool for tool in agent.toolbox}[name]
    return await tool.call(json.dumps(arguments))


def memory_text(scope: Scope) -> str:
    return "\n".join(
        p.read_text(encoding="utf-8")
        for p in scope.workspace.rglob("*.md")
        if ".cairn" not in p.parts
    )


@pytest.mark.parametrize(
    "scope",
    ["../osprey", "project:osprey", "global/../osprey", "USER", " project", "osprey", "/"],
)
async def test_a_scope_that_is_not_user_or_project_is_refused_and_nothing_is_written(
    demo_settings: Settings, folders: tuple[Path, Path], scope: str
) -> None:
    a, b = folders
    b_scope = session_scopes(in_project(demo_settings, b)).own
    await (await agent_in(in_project(demo_settings, b))).aclose()  # B's memory exists
    agent = await agent_in(in_project(demo_settings, a))
    before = {s.label: memory_text(s) for s in (b_scope, session_scopes(agent.settings).user)}
    for name in ("memory_append", "memory_get"):
        arguments = {"text": "Heron ships on Fridays."} if name == "memory_append" else {}
        result = await call(agent, name, path="MEMORY.md", scope=scope, **arguments)
        assert result.error and "scope" in result.error
    after = {s.label: memory_text(s) for s in (b_scope, session_scopes(agent.settings).user)}
    assert after == before
    await agent.aclose()


async def test_a_path_out_of_the_project_memory_reaches_no_other_memory(
    demo_settings: Settings, folders: tuple[Path, Path]
) -> None:
    a, b = folders
    b_agent = await agent_in(in_project(demo_settings, b))
    await call(b_agent, "memory_append", text="Osprey's staging host is wren-3.")
    await b_agent.aclose()
    b_scope = session_scopes(in_project(demo_settings, b)).own
    agent = await agent_in(in_project(demo_settings, a))
    own = session_scopes(agent.settings).own
    note = next(b_scope.workspace.glob("memory/*.md"))
    escapes = [
        f"../{b_scope.workspace.name}/{note.relative_to(b_scope.workspace)}",
        str(note),
        f"memory/../../{b_scope.workspace.name}/MEMORY.md",
        f"../../{demo_settings.workspace.name}/MEMORY.md",
    ]
    for path in escapes:
        read = await call(agent, "memory_get", path=path)
        assert read.error and "wren-3" not in read.content
        written = await call(agent, "memory_append", path=path, text="- planted by heron")
        assert written.error
    assert "planted by heron" not in memory_text(b_scope) + memory_text(own)
    await agent.aclose()


async def test_a_project_folder_that_is_a_symlink_to_another_is_that_other_project(
    demo_settings: Settings, folders: tuple[Path, Path], tmp_path: Path
) -> None:
    a, b = folders
    link = tmp_path / "heron-link"
    link.symlink_to(b, target_is_directory=True)
    through_link = session_scopes(in_project(demo_settings, link)).own
    assert through_link == session_scopes(in_project(demo_settings, b)).own
    assert through_link != session_scopes(in_project(demo_settings, a)).own


async def test_a_project_memory_replaced_by_a_symlink_to_another_is_refused(
    demo_settings: Settings, folders: tuple[Path, Path]
) -> None:
    a, b = folders
    await (await agent_in(in_project(demo_settings, b))).aclose()
    a_place = session_scopes(in_project(demo_settings, a)).own.workspace
    b_place = session_scopes(in_project(demo_settings, b)).own.workspace
    a_place.symlink_to(b_place, target_is_directory=True)
    with pytest.raises(ConfigError, match="is a symlink"):
        build_agent(in_project(demo_settings, a), index_in_background=False)


async def test_shared_projects_read_each_other_but_a_secret_never_crosses(
    demo_settings: Settings, folders: tuple[Path, Path]
) -> None:
    a, b = folders
    share = ScopeSettings(share=(str(a), str(b)))
    a_agent = await agent_in(in_project(demo_settings, a, secrets="off", scopes=share))
    await call(a_agent, "memory_append", text=f"Heron's CI token is {TOKEN}")
    await call(a_agent, "memory_append", text="Heron's CI runs on the buildkite queue heron-ci.")
    await a_agent.aclose()
    alone = await agent_in(in_project(demo_settings, b))
    unshared = json.loads(
        (await call(alone, "memory_search", query="Heron CI", minScore=0)).content
    )
    assert not [hit for hit in unshared["results"] if "Heron" in hit["snippet"]]
    await alone.aclose()

    b_agent = await agent_in(in_project(demo_settings, b, scopes=share))
    found = json.loads((await call(b_agent, "memory_search", query="Heron CI", minScore=0)).content)
    heron = [hit for hit in found["results"] if hit["scope"] == "project:heron"]
    assert heron and any("buildkite queue heron-ci" in hit["snippet"] for hit in heron)
    assert TOKEN not in json.dumps(found)
    written = await call(b_agent, "memory_append", text="Osprey notes.", scope="project")
    assert json.loads(written.content)["scope"] == "project:osprey"  # a shared one is read-only
    await b_agent.aclose()


async def test_memory_get_takes_a_scope_as_its_hits_name_it_and_no_other(
    demo_settings: Settings, folders: tuple[Path, Path]
) -> None:
    agent = await agent_in(in_project(demo_settings, folders[0]))
    await call(agent, "memory_append", text="Heron's cache is redis-9.", path="MEMORY.md")
    for scope, found in (("project:heron", "redis-9"), ("global", "curated long-term memory")):
        read = await call(agent, "memory_get", path="MEMORY.md", scope=scope)
        assert read.error is None and found in json.loads(read.content)["text"]
        assert json.loads(read.content)["scope"] == scope
    for other in ("project:osprey", "../osprey", "/etc"):
        refused = await call(agent, "memory_append", text="x", scope=other)
        assert refused.error  # a write names this session's memories, as reads do
    await agent.aclose()

"""Dreaming per memory: a project's recalled fact is proposed into that project's MEMORY.md,
and a sweep of the global memory or of another project never proposes it, through the real
agents (the demo brain distils), real git and the real index."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from shell import events as ev
from shell.agent import Agent
from shell.build import build_agent, build_dreamer
from shell.config import Settings, ToolSettings
from shell.events import SearchHit
from shell.scopes.scopes import session_scopes
from tests.core.agent_helpers import collect, of
from tests.core.dreams import FOUR, TODAY, WINDOW

FACT = "Tom takes his coffee black"


async def agent_in(settings: Settings, folder: Path) -> Agent:
    scoped = replace(settings, project=folder, tools=ToolSettings(project="off"))
    agent = build_agent(scoped, index_in_background=False, interactive=False)
    await collect(agent.start())
    return agent


def recalled_often(agent: Agent, path: str) -> None:
    """Four differently worded searches that found the fact, in the project's own hit log
    (as `tests.core.dreams.DreamWorld.recalled` plants them)."""
    recall = agent.dreamer.recall
    recall.sync("manual")
    units, _ = recall.index.file_units(path)
    unit = units[0]
    hit = SearchHit(
        path, unit.start_line, unit.end_line, 0.62, 0.62, 0.0, unit.text, f"{path}#L1", unit=unit.id
    )
    assert recall.hit_log is not None
    for query in FOUR:
        recall.hit_log.record(query, [hit])


async def test_a_projects_fact_is_dreamed_in_that_project_and_nowhere_else(
    demo_settings: Settings, tmp_path: Path
) -> None:
    heron, osprey = tmp_path / "heron", tmp_path / "osprey"
    heron.mkdir()
    osprey.mkdir()
    a = await agent_in(demo_settings, heron)
    append = {tool.name: tool for tool in a.toolbox}["memory_append"]
    written = json.loads((await append.call(json.dumps({"text": f"- {FACT}"}))).content)
    assert written["scope"] == "project:heron"
    recalled_often(a, written["path"])

    dreamed = await collect(a.dream("manual"))
    [proposed] = of(dreamed, ev.DreamProposed)
    assert "coffee black" in proposed.proposal.text
    heron_memory = session_scopes(a.settings).own.workspace
    assert "coffee black" in (heron_memory / "DREAMS.md").read_text()
    await a.aclose()

    global_sweep = [e async for e in build_dreamer(demo_settings).sweep("cli", window=WINDOW)]
    b = await agent_in(demo_settings, osprey)
    other_sweep = await collect(b.dream("manual"))
    osprey_memory = session_scopes(b.settings).own.workspace
    await b.aclose()
    for events in (global_sweep, other_sweep):
        assert not of(events, ev.DreamProposed)
        assert "coffee" not in json.dumps([ev.to_dict(e) for e in events])
    for name in ("DREAMS.md", "MEMORY.md"):  # the global sweep's diary says it found nothing
        assert "coffee" not in (demo_settings.workspace / name).read_text()
    assert "coffee" not in (osprey_memory / "DREAMS.md").read_text()
    assert TODAY in written["path"]

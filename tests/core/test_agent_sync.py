"""Two machines, one memory: demo sessions on two workspaces that sync through a bare remote.

The agent adds the configured remote at start and syncs in the background, pushes after a
write, and a fact remembered on the first is found and cited on the second after its sync.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
from dataclasses import replace
from pathlib import Path

from shell.agent import Agent
from shell.build import build_agent
from shell.config import Settings
from shell.events import (
    AssistantMessage,
    Event,
    IndexSynced,
    SyncFailed,
    SyncFinished,
    SyncStatusChanged,
    TurnFinished,
)


def bare(tmp_path: Path) -> Path:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    return remote


def machine(settings: Settings, root: Path, remote: str, host: str) -> Agent:
    mine = replace(
        settings,
        workspace=root,
        remote=remote,
        sync_push_delay=0.05,
        git_author_email=f"cairn@{host}",
    )
    return build_agent(mine, index_in_background=False, interactive=False)


async def turn(agent: Agent, text: str) -> list[Event]:
    async with contextlib.aclosing(agent.submit(text)) as events:
        return [event async for event in events]


async def settled(agent: Agent, limit: float = 60.0) -> list[Event]:
    """The background sync events up to the status that follows the next sync's end (the
    status said at start comes before any sync, and does not count)."""
    seen: list[Event] = []

    async def collect() -> None:
        ended = False
        async for event in agent.sync.events():
            seen.append(event)
            ended = ended or isinstance(event, SyncFinished | SyncFailed)
            if ended and isinstance(event, SyncStatusChanged):
                return

    await asyncio.wait_for(collect(), limit)
    return seen


async def test_a_fact_remembered_on_one_machine_is_recalled_on_the_other(
    demo_settings: Settings, tmp_path: Path
) -> None:
    remote = str(bare(tmp_path))
    laptop = machine(demo_settings, tmp_path / "laptop", remote, "laptop")
    [_ async for _ in laptop.start()]
    added = await settled(laptop)
    assert isinstance(added[-2], SyncFinished)  # the remote was added and both sides merged
    await turn(laptop, "remember that the staging database is on port 6543")
    pushed = await settled(laptop)  # the push after the write
    [finished] = [e for e in pushed if isinstance(e, SyncFinished)]
    assert finished.pushed_commits >= 1
    assert pushed[-1] == replace(pushed[-1], ahead=0, offline=False)
    await laptop.aclose()

    server = machine(demo_settings, tmp_path / "server", remote, "server")
    [_ async for _ in server.start()]
    came = await settled(server)
    [merged] = [e for e in came if isinstance(e, SyncFinished)]
    assert merged.pulled_commits >= 2 and any(p.startswith("memory/") for p in merged.changed)
    [indexed] = [e for e in came if isinstance(e, IndexSynced)]  # shown, not dropped
    assert indexed.trigger == "pull" and came.index(indexed) > came.index(merged)
    answer = await turn(server, "which port is the staging database on?")
    said = [e.text for e in answer if isinstance(e, AssistantMessage)][-1]
    assert "6543" in said and "Source: memory/" in said
    log = server.git.log(limit=20)
    assert "laptop" in {commit.machine for commit in log}
    await server.aclose()


async def test_an_unreachable_remote_is_a_notice_and_the_turn_completes(
    demo_settings: Settings, tmp_path: Path, refused_port: int
) -> None:
    agent = machine(
        demo_settings, tmp_path / "ws", f"git://127.0.0.1:{refused_port}/memory.git", "box"
    )
    [_ async for _ in agent.start()]
    events = await turn(agent, "remember that the backup runs at 02:00")
    assert isinstance(events[-1], TurnFinished) and events[-1].reason == "completed"
    failed = await settled(agent)
    kinds = [(e.kind, e.message) for e in failed if isinstance(e, SyncFailed)]
    assert [kind for kind, _ in kinds] == ["offline"], kinds
    status = failed[-1]
    assert isinstance(status, SyncStatusChanged) and status.offline and status.retry_in_s == 5.0
    await agent.aclose()

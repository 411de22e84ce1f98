"""The start of a session: the announcement, the context window, the MCP servers, the bootstrap
files, recovery notices, the sync's first pull and the first meter."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Protocol

from shell.config import Settings
from shell.context.budget import ContextWindow
from shell.context.request import RequestBuilder
from shell.dreaming import Dreamer
from shell.events import Event, Loading, Notice, ProposalsWaiting, SessionStarted, UsageUpdated
from shell.git.store import GitStore
from shell.model import LLM
from shell.readonly import read_only
from shell.recovery import recover_interrupted
from shell.session.conversation import Conversation
from shell.sync.service import SyncService
from shell.tools.workbench import Workbench
from shell.workspace import recovery_notices


class Starting(Protocol):
    """What the start needs of the session (`shell.agent.Agent`)."""

    settings: Settings
    llm: LLM
    git: GitStore
    window: ContextWindow
    workbench: Workbench
    request_builder: RequestBuilder
    conversation: Conversation
    sync: SyncService
    dreamer: Dreamer

    @property
    def session_id(self) -> str: ...

    @property
    def workspace(self) -> Path: ...

    def usage(self) -> UsageUpdated: ...


def session_started(agent: Starting, *, resumed: bool) -> SessionStarted:
    """The announcement of a session, at start and after `/new`."""
    return SessionStarted(
        session_id=agent.session_id,
        resumed=resumed,
        model=agent.settings.model,
        workspace=str(agent.workspace),
        demo=agent.settings.demo,
    )


async def start_session(agent: Starting, *, resumed: bool) -> AsyncIterator[Event]:
    """Announce the session and resolve the context window. The bootstrap files and the
    first token count (which loads the tokenizer) run off the event loop, so a TUI paints
    meanwhile. The model's libraries load in the background from here on, shown as
    `Loading("model")` until they are ready (the start ends then, so a prompt sent meanwhile
    waits in the consumer's queue); the memory index starts later, after the first turn or at
    the first search."""
    # Whether the model is loading is decided before the background load starts: checked
    # after, a load that finished at once (litellm already imported, as in the tests) made
    # the start's Loading events come or not by the threads' race.
    model_loading = not agent.llm.loaded()
    agent.llm.preload()
    yield session_started(agent, resumed=resumed)
    if model_loading:
        yield Loading("model", done=False)
    if not agent.window.resolved and (
        unknown := await asyncio.to_thread(
            agent.window.look_up, agent.llm.context_window, agent.settings.model
        )
    ):
        yield unknown
    async for event in agent.workbench.start():  # MCP servers, each bounded in time
        yield event
    bootstrap = await asyncio.to_thread(agent.request_builder.bootstrap)
    for event in bootstrap.events:
        yield event
    torn = agent.conversation.sessions.torn_lines(agent.session_id) if resumed else 0
    for notice in await asyncio.to_thread(recovery_notices, agent.workspace, torn):
        yield notice
    if resumed:  # a record rebuilt, a round a kill cut short: said, never silent
        sessions = agent.conversation.sessions
        for text in await asyncio.to_thread(sessions.opening_notices, agent.session_id):
            yield Notice(text, level="warning")
    # what a kill left half done: Cairn's own writes, a revert
    for event in await asyncio.to_thread(recover_interrupted, agent.workspace, agent.git):
        yield event
    if not read_only(agent.workspace):  # else it is read as it is: no pull, no merge
        for event in await asyncio.to_thread(agent.sync.recover):  # a pull a kill cut short
            yield event
        agent.sync.start()  # the pull at start, in the background: no turn waits on it
    if waiting := await asyncio.to_thread(agent.dreamer.waiting):
        yield ProposalsWaiting(waiting)
    for notice in [*agent.dreamer.notices(), *agent.request_builder.calibrations.take_notices()]:
        yield notice  # state under .cairn set aside as it was read
    yield await asyncio.to_thread(agent.usage)
    if model_loading:
        await agent.llm.wait_loaded()
        yield Loading("model", done=True)

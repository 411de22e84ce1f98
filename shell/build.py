"""The composition root: one Agent from Settings, shared by the TUI, `cairn run` and tests."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from shell.agent import Agent
from shell.config import Settings
from shell.context.budget import configured_window
from shell.context.calibration import CalibrationStore
from shell.context.counter import TokenCounter
from shell.context.request import RequestBuilder
from shell.demo import register as register_demo
from shell.dreaming import Dreamer
from shell.git.store import GitStore
from shell.lifecycle.manager import MemoryLifecycle
from shell.memory.citations.project import citation_stamper
from shell.memory.citations.stamp import CitationStamper
from shell.memory.files.door import MemoryFiles
from shell.memory.files.scoped import ScopedDoors
from shell.memory.service import RecallService
from shell.memory.tools import memory_tools
from shell.model import LLM
from shell.model.textcalls import is_local
from shell.scopes.scopes import Scope, Scopes, scope_settings, session_scopes
from shell.session.conversation import Conversation
from shell.session.store import SessionStore
from shell.sync.service import SyncService
from shell.tools.toolbox import Toolbox
from shell.tools.workbench import Workbench
from shell.workspace import PROJECT_SEEDS, SEEDS, init_workspace


def open_history(workspace: Path) -> GitStore:
    """The workspace's commit history (one commit per memory write), for a replay's git pane."""
    return GitStore(workspace)


def build_agent(
    settings: Settings,
    *,
    session_id: str | None = None,
    resume: bool = False,
    index_in_background: bool = True,
    interactive: bool = True,
) -> Agent:
    """The composition root shared by the TUI, `cairn run`, tests and benchmarks.

    `index_in_background`: see `Agent`; headless runs pass False, so they index only to search.
    `interactive`: a person can answer approvals (the TUI); headless runs pass False, so what
    no allow rule covers is denied (`shell.tools.approvals`).
    """
    git = init_workspace(settings)
    memory = _scoped_memory(settings, git)
    files = memory.global_files
    conversation, resumed = _open_conversation(settings, session_id=session_id, resume=resume)
    window = configured_window(settings)
    llm = _model(settings)
    recall = memory.global_recall
    sync = _sync_service(settings, recall)
    files.git.on_commit = sync.committed
    toolbox = _memory_toolbox(settings, memory, conversation)
    workbench = Workbench(settings, toolbox, interactive=interactive, window=window)
    # hashed only where the project tools may read: none while they are not offered (a small
    # window), so a hash never tells the model about a line it could not read
    files.citations = CitationStamper(lambda: workbench.project)
    request_builder = RequestBuilder(
        settings,
        counter=TokenCounter(),
        toolbox=toolbox,
        window=window,
        conversation=conversation,
        calibrations=CalibrationStore(settings.state_dir),
        scopes=memory.scopes,
    )
    lifecycle = MemoryLifecycle(
        conversation,
        llm=llm,
        files=files,
        request_builder=request_builder,
        window=window,
        clock=settings.clock,
        timer=settings.timer,
        force_flush_transcript_bytes=settings.force_flush_transcript_bytes,
        doors=memory.doors if memory.doors.scoped else None,
    )
    own = memory.own
    dreamer = Dreamer(own.settings, files=own.files, git=own.files.git, recall=own.recall, llm=llm)
    return Agent(
        settings,
        llm=llm,
        git=git,
        conversation=conversation,
        window=window,
        toolbox=toolbox,
        request_builder=request_builder,
        lifecycle=lifecycle,
        recall=recall,
        dreamer=dreamer,
        workbench=workbench,
        sync=sync,
        resumed=resumed,
        index_in_background=index_in_background,
        scope_recalls=[r for _, r in memory.recalls if r is not recall],
    )


@dataclass(frozen=True)
class ScopeMemory:
    """One scope's workspace as a session uses it: its settings, its one door, its recall."""

    scope: Scope
    settings: Settings
    files: MemoryFiles
    recall: RecallService


@dataclass(frozen=True)
class ScopedMemory:
    """Every memory of a session (`shell.scopes`): the global one, its project's, the shared."""

    scopes: Scopes
    parts: tuple[ScopeMemory, ...]
    """The own scope first, then the global one (when a project is open), then the shared."""

    @property
    def own(self) -> ScopeMemory:
        return self.parts[0]

    @property
    def global_part(self) -> ScopeMemory:
        return next(part for part in self.parts if part.scope == self.scopes.user)

    @property
    def global_files(self) -> MemoryFiles:
        return self.global_part.files

    @property
    def global_recall(self) -> RecallService:
        return self.global_part.recall

    @property
    def recalls(self) -> list[tuple[Scope, RecallService]]:
        return [(part.scope, part.recall) for part in self.parts]

    @property
    def doors(self) -> ScopedDoors:
        writable = (self.scopes.own, self.scopes.user)
        return ScopedDoors(
            self.scopes, {p.scope.label: p.files for p in self.parts if p.scope in writable}
        )


def _scoped_memory(settings: Settings, global_git: GitStore) -> ScopedMemory:
    """The session's memories, each seeded and a git repo. With a project open, the global
    door blocks a secret (it never goes global) and the global recall keeps no hit log (no
    project's query is stored in the global memory's state)."""
    scopes = session_scopes(settings)
    parts = []
    for scope in scopes.readable:
        here = scope_settings(settings, scope)
        git = (
            global_git
            if scope.kind == "global"
            else init_workspace(here, PROJECT_SEEDS)
            if scope == scopes.own
            else GitStore(scope.workspace)  # a shared project's: read, never written
        )
        if scope != scopes.own:
            here = replace(here, dreaming=replace(here.dreaming, enabled=False))
        policy = "block" if scope.kind == "global" and scopes.project else settings.secrets
        stamper = citation_stamper(here)
        files = MemoryFiles(
            scope.workspace, git, secrets=policy, scope=scope.label, citations=stamper
        )
        writable = scope in (scopes.own, scopes.user)
        outside = files.commit_outside_edits if writable else None
        recall = RecallService(here, outside_edits=outside, scope=scope.label)
        parts.append(ScopeMemory(scope, here, files, recall))
    return ScopedMemory(scopes, tuple(parts))


def _open_conversation(
    settings: Settings, *, session_id: str | None, resume: bool
) -> tuple[Conversation, bool]:
    """The session `session_id` names, else the latest when `resume`, else a new one; and
    whether it was resumed."""
    sessions = SessionStore(settings.state_dir, settings.clock, token=settings.session_token)
    record = sessions.opened(session_id, resume=resume)
    resumed = record is not None
    if record is None:
        record = sessions.create(settings.model, prelude=True)
    messages = sessions.messages(record.session_id) if resumed else []
    if resumed and record.compaction_count:
        record.needs_reinjection = True  # the rules re-injected after compaction live in memory
    return Conversation(sessions, record, messages), resumed


def _sync_service(settings: Settings, recall: RecallService) -> SyncService:
    return SyncService(
        settings.workspace,
        remote=settings.remote,
        author_name=settings.git_author_name,
        author_email=settings.git_author_email,
        push_delay=settings.sync_push_delay,
        reindex=lambda changed: recall.sync("pull"),  # incremental: the changed files only
    )


def _memory_toolbox(
    settings: Settings, memory: ScopedMemory, conversation: Conversation
) -> Toolbox:
    """The memory tools over every scope of the session; the workbench adds the project and
    MCP tools to the same box."""
    if memory.doors.scoped:
        from shell.memory.search.scoped import ScopedSearch
        from shell.memory.search.tool import search_tool

        scoped = ScopedSearch(memory.scopes, memory.recalls)
        search = search_tool(scoped, before_search=scoped.before_search)
    else:
        search = memory.own.recall.tool()
    doors = memory.doors
    tools = memory_tools(doors, today=settings.today, origin=conversation.origin)
    return Toolbox([search, *tools], timer=settings.timer)


def build_dreamer(
    settings: Settings, seeds: dict[str, str] = SEEDS, scope: str = "global"
) -> Dreamer:
    """Dreaming alone on the memory of `settings.workspace`, for `cairn dream`: no session, no
    agent loop; `seeds`: that workspace's (`PROJECT_SEEDS` for a project's); `scope`: its
    label (`shell.scopes`)."""
    git = init_workspace(settings, seeds)
    files = MemoryFiles(
        settings.workspace,
        git,
        secrets=settings.secrets,
        scope=scope,
        citations=citation_stamper(settings),
    )
    return Dreamer(
        settings, files=files, git=git, recall=RecallService(settings), llm=_model(settings)
    )


def _model(settings: Settings) -> LLM:
    register_demo(today=lambda: settings.clock().date())
    return LLM(
        settings.model,
        api_base=settings.api_base,
        api_key=settings.api_key,
        max_attempts=settings.max_attempts,
        base_delay=settings.retry_base_delay,
        timeout=settings.request_timeout,
        ask_count=is_local(settings.api_base),
    )

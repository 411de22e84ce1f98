"""The composition root: one Agent from Settings, shared by the TUI, `cairn run` and tests."""

from __future__ import annotations

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
from shell.memory.service import RecallService
from shell.memory.tools import memory_tools
from shell.model import LLM
from shell.model.textcalls import is_local
from shell.session.conversation import Conversation
from shell.session.record import SessionRecord
from shell.session.store import SessionStore
from shell.sync.service import SyncService
from shell.tools.toolbox import Toolbox
from shell.tools.workbench import Workbench
from shell.workspace import init_workspace


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
    files = MemoryFiles(settings.workspace, git, secrets=settings.secrets)
    conversation, resumed = _open_conversation(settings, session_id=session_id, resume=resume)
    window = configured_window(settings)
    llm = _model(settings)
    recall = RecallService(settings, outside_edits=files.commit_outside_edits)
    sync = _sync_service(settings, recall)
    git.on_commit = sync.committed
    toolbox = _memory_toolbox(settings, files, recall, conversation)
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
    )
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
        dreamer=Dreamer(settings, files=files, git=git, recall=recall, llm=llm),
        workbench=workbench,
        sync=sync,
        resumed=resumed,
        index_in_background=index_in_background,
    )


def _open_conversation(
    settings: Settings, *, session_id: str | None, resume: bool
) -> tuple[Conversation, bool]:
    """The session `session_id` names, else the latest when `resume`, else a new one; and
    whether it was resumed."""
    sessions = SessionStore(settings.state_dir, settings.clock, token=settings.session_token)
    record: SessionRecord | None = None
    if session_id:
        record = sessions.load(session_id)
    elif resume:
        record = sessions.latest()
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
    settings: Settings, files: MemoryFiles, recall: RecallService, conversation: Conversation
) -> Toolbox:
    """The memory tools; the workbench adds the project and MCP tools to the same box."""
    return Toolbox(
        [recall.tool(), *memory_tools(files, today=settings.today, origin=conversation.origin)],
        timer=settings.timer,
    )


def build_dreamer(settings: Settings) -> Dreamer:
    """Dreaming alone, for `cairn dream`: no session, no agent loop."""
    git = init_workspace(settings)
    files = MemoryFiles(
        settings.workspace, git, secrets=settings.secrets, citations=citation_stamper(settings)
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

"""The composition root: one Agent from Settings, shared by the TUI, `cairn run` and tests."""

from __future__ import annotations

from pathlib import Path

from shell.agent import Agent
from shell.config import Settings
from shell.demo import register as register_demo
from shell.dreaming import Dreamer
from shell.llm import LLM
from shell.memory.files import MemoryFiles
from shell.memory.git import GitStore
from shell.memory.service import RecallService
from shell.session import SessionRecord, SessionStore
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
) -> Agent:
    """The composition root shared by the TUI, `cairn run`, tests and benchmarks.

    `index_in_background`: see `Agent`; headless runs pass False, so they index only to search.
    """
    git = init_workspace(settings)
    files = MemoryFiles(settings.workspace, git, secrets=settings.secrets)
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
    llm = _model(settings)
    recall = RecallService(settings)
    dreamer = Dreamer(settings, files=files, git=git, recall=recall, llm=llm)
    return Agent(
        settings,
        llm=llm,
        git=git,
        files=files,
        sessions=sessions,
        record=record,
        messages=messages,
        recall=recall,
        dreamer=dreamer,
        resumed=resumed,
        index_in_background=index_in_background,
    )


def build_dreamer(settings: Settings) -> Dreamer:
    """Dreaming alone, for `cairn dream`: no session, no agent loop."""
    git = init_workspace(settings)
    files = MemoryFiles(settings.workspace, git, secrets=settings.secrets)
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
    )

"""The session: `Agent.submit(text)` yields every fact of a turn, or of a command, as an event.

The turn itself runs in `shell.turn`; the agent holds the session's collaborators and
gives front ends (the TUI, the headless commands) the few entry points they need.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from shell import commands
from shell.config import Settings
from shell.context.budget import ContextBudget, ContextWindow
from shell.context.request import RequestBuilder
from shell.dreaming import Decision, Dreamer, Preview
from shell.events import (
    ApprovalChoice,
    DreamTrigger,
    Event,
    MemoryForgotten,
    Notice,
    Take,
    ToolsListed,
    UsageUpdated,
)
from shell.git.history import MemoryHistory, RevertPreview, revert_events
from shell.git.store import GitStore
from shell.lifecycle.manager import MemoryLifecycle
from shell.memory.files.door import MemoryFiles
from shell.memory.service import RecallService
from shell.memory.user_edit import commit_user_edit
from shell.model import LLM
from shell.session.conversation import Conversation
from shell.session.record import SessionRecord
from shell.session.views import ViewRecorder
from shell.start import session_started, start_session
from shell.streams import merged
from shell.sync.service import SyncService
from shell.tools.toolbox import Toolbox
from shell.tools.workbench import Workbench
from shell.turn import DISK_ERRNOS, TurnLoop, TurnParts

RECORDED = ("start", "submit", "dream", "decide", "background_events")
"""The streams a resumed session shows again (`ViewRecorder`): the turns and sweeps, and every
memory write a person asks for (their edit, a conflict settled, a revert)."""


class Agent(
    ViewRecorder,
    records=(*RECORDED, "edited_by_user", "resolve_conflict", "revert", "redact_unpushed"),
):
    """A session with the model: the conversation, its counters, and the memory it writes.

    Its collaborators come wired from `shell.build`; the agent runs the turn between them.
    """

    playback = None  # live, not a recorded session played back (the TUI's `AgentSource`)

    def __init__(
        self,
        settings: Settings,
        *,
        llm: LLM,
        git: GitStore,
        conversation: Conversation,
        window: ContextWindow,
        toolbox: Toolbox,
        request_builder: RequestBuilder,
        lifecycle: MemoryLifecycle,
        recall: RecallService,
        dreamer: Dreamer,
        workbench: Workbench,
        sync: SyncService,
        resumed: bool = False,
        index_in_background: bool = True,
        scope_recalls: Sequence[RecallService] = (),
    ) -> None:
        """`index_in_background`: sync the memory index and watch the files from the end of
        the first turn on (the TUI); when false, the index syncs only for a search (headless).
        `scope_recalls`: the recall of the session's other memories (`shell.scopes`: the
        project's, the shared ones), synced for a search and closed with the agent."""
        self.settings = settings
        self.llm = llm
        self.git = git
        self.conversation = conversation
        self.window = window
        self.toolbox = toolbox
        self.request_builder = request_builder
        self.lifecycle = lifecycle
        self.recall = recall
        self.dreamer = dreamer
        self.workbench = workbench
        self.sync = sync
        self._resumed = resumed
        self._scope_recalls = tuple(scope_recalls)
        parts = TurnParts(
            settings, llm, conversation, toolbox, request_builder, lifecycle, recall, workbench
        )
        self.loop = TurnLoop(parts, index_in_background=index_in_background)

    @property
    def record(self) -> SessionRecord:
        return self.conversation.record

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.conversation.messages

    @property
    def budget(self) -> ContextBudget:
        return self.window.budget

    @property
    def session_id(self) -> str:
        return self.record.session_id

    @property
    def workspace(self) -> Path:
        return self.settings.workspace

    # --- public API ---------------------------------------------------------------------

    def start(self) -> AsyncIterator[Event]:
        """Announce the session, resolve the window, load what it needs (`shell.start`)."""
        return start_session(self, resumed=self._resumed)

    async def submit(self, text: str) -> AsyncGenerator[Event]:
        """A user prompt, or a slash command (`shell.commands`; `/help` lists them)."""
        invocation = commands.parse(text)
        if invocation is None:
            stream = self.loop.run(text)
        else:
            stream = commands.run_command(self, invocation)
        async with contextlib.aclosing(stream) as events:
            async for event in events:
                yield event

    def answer_approval(self, call_id: str, choice: ApprovalChoice, reason: str = "") -> bool:
        """The user's answer to the call waiting for approval (`ApprovalRequested`)."""
        return self.workbench.answer(call_id, choice, reason)

    def cancel(self) -> bool:
        """Ask the turn under way to stop at its next safe point (`shell.loop.cancel`): it ends
        with a `TurnCancelled` receipt. False when no turn is running."""
        return self.loop.cancellation.request()

    async def compact(self, focus: str | None = None) -> AsyncGenerator[Event]:
        """Manual /compact: flush first if this cycle has not been flushed, then compact."""
        async for event in self.lifecycle.flush_then_compact("manual", focus):
            yield event
        yield self.usage()

    async def flush(self) -> AsyncGenerator[Event]:
        async for event in self.lifecycle.flush("manual"):
            yield event
        yield self.usage()

    async def sync_now(self) -> AsyncGenerator[Event]:
        """`/sync`: pull, then push, now (`shell.sync`)."""
        for event in await self.sync.sync_now():
            yield event

    async def redact_unpushed(self, apply: bool = False) -> AsyncGenerator[Event]:
        """`/sync redact`: what rewriting the commits not pushed yet with their secrets redacted
        would change; with `apply` (`/sync redact apply`), the rewrite and the sync that pushes
        it. Only commits after the remote's head are rewritten (`SyncEngine.redact_unpushed`)."""
        hint = "" if apply else "to rewrite them so: /sync redact apply"
        for event in await self.sync.redact_unpushed(apply=apply, hint=hint):
            yield event

    async def resolve_conflict(self, file: str, take: Take) -> AsyncGenerator[Event]:
        """Settle a sync conflict (`SyncConflict`): keep local, take the remote's, or both."""
        for event in await self.sync.resolve(file, take):
            yield event

    async def tools_listing(self) -> AsyncGenerator[Event]:
        """`/tools`: the tools the model may call, how each is approved, the MCP servers."""
        yield self.listed_tools()

    def listed_tools(self) -> ToolsListed:
        """The tools the model may call, how each is approved, the MCP servers."""
        return self.workbench.listing()

    async def context_report(self) -> AsyncGenerator[Event]:
        """`/context`: what the next prompt holds, how it was counted, and what was cut."""
        yield self.request_builder.report(self.loop.reported)

    async def new_session(self) -> AsyncGenerator[Event]:
        """`/new`: a flush attempt first (or the gate's reason why none), as a compaction has,
        since the context it ends is gone from the model's reach; then a fresh session."""
        async for event in self.lifecycle.flush_before_new_session():
            yield event
        self.conversation.restart(self.settings.model)
        self.loop.reported = (0, 0)  # the provider's numbers were the old session's
        self._resumed = False
        yield session_started(self, resumed=False)
        yield self.usage()

    async def dream(self, trigger: DreamTrigger = "manual") -> AsyncGenerator[Event]:
        """A dreaming sweep (`shell.dreaming`): proposals for MEMORY.md into the review queue."""
        async with contextlib.aclosing(
            self.dreamer.sweep(trigger, window=self.budget.window)
        ) as events:
            async for event in events:
                yield event

    async def decide(self, decision: Decision) -> AsyncGenerator[Event]:
        """A person's decision on a proposal of the review queue, as events."""
        for event in await asyncio.to_thread(
            self.dreamer.decide, decision, window=self.budget.window
        ):
            yield event

    def open_proposals(self) -> list[Preview]:
        """The proposals waiting for review, with what accepting each would change."""
        return self.dreamer.open_proposals(window=self.budget.window)

    @property
    def own(self) -> MemoryFiles:
        """The door of the memory this session writes: its project's when one is open (`shell.
        scopes`), else the global one; the panes show it."""
        return self.dreamer.files

    async def edited_by_user(self, path: str) -> AsyncGenerator[Event]:
        """A file of the session's own memory saved in the user's editor: committed as their
        edit, then re-indexed."""
        recall = self._writable_recall(self.own.scope) or self.recall
        async for event in commit_user_edit(self.own, recall, path):
            yield event

    async def revert(self, sha: str) -> AsyncGenerator[Event]:
        """Undo memory commit `sha` as a new commit of the store, which the sync pushes as any
        write: a `MemoryWritten` per file it changed, or a notice of why nothing changed."""
        async for event in revert_events(self._history_of(sha), sha):
            yield event

    def revert_preview(self, sha: str) -> RevertPreview:
        """What reverting `sha` would change, and whether it still applies (blocking: call it
        off the event loop). Raises GitFailure when `sha` names no commit."""
        return self._history_of(sha).preview_revert(sha)

    def _history_of(self, sha: str) -> MemoryHistory:
        """The history of the memory holding commit `sha`: the session's own (its project's,
        F5 lists it), else the global one."""
        stores = (self.own.git, self.git)
        return MemoryHistory(next((s for s in stores if s.runner.rev(sha)), self.git))

    def memories(self) -> dict[str, Path]:
        """The workspace of each memory this session reads, by the label its hits show."""
        from shell.scopes.scopes import session_scopes

        return {scope.label: scope.workspace for scope in session_scopes(self.settings).readable}

    async def forget(
        self, place: str, *, apply: bool, scope: str = "global"
    ) -> AsyncGenerator[Event]:
        """`cairn forget` from the session (the why screen's `x`): what forgetting the line at
        `place` would rewrite, or with `apply` the purge of the files, history, `.cairn/`, the
        index and the remote; the live conversation loses the line too, so no later
        compaction writes it back into the transcript. `scope`: the memory, by its label (a
        project's does not sync). A line that cannot be forgotten is a notice."""
        from shell.forget import ForgetError, Identity, forget, line_at
        from shell.memory.forget.state import scrub_messages

        settings = self.settings
        identity = Identity(settings.git_author_name, settings.git_author_email)
        recall = self._writable_recall(scope)
        async with self.sync.held() as engine:
            try:
                if recall is None:
                    raise ForgetError(f"{scope} is not a memory this session may change")
                root = recall.settings.workspace.resolve()
                line = line_at(root, place)
                events = await asyncio.to_thread(
                    forget,
                    root,
                    place=place,
                    apply=apply,
                    identity=identity,
                    engine=engine if recall is self.recall else None,
                    index=recall.index if apply else None,
                    sessions=self.settings.workspace,
                )
            except ForgetError as error:
                yield Notice(f"not forgotten: {error}", "warning")
                return
        if apply and any(isinstance(e, MemoryForgotten) and e.applied for e in events):
            scrub_messages(self.conversation.messages, line)
        for event in events:
            yield event

    def _writable_recall(self, label: str) -> RecallService | None:
        """The recall of the memory labelled `label` when this session writes it (its own, or
        the global one; a shared project's is read-only)."""
        from shell.scopes.scopes import session_scopes

        scopes = session_scopes(self.settings)
        wanted = {s.label: s.workspace.resolve() for s in (scopes.own, scopes.user)}.get(label)
        recalls = (self.recall, *self._scope_recalls)
        return next((r for r in recalls if r.settings.workspace.resolve() == wanted), None)

    async def background_events(self) -> AsyncIterator[Event]:
        """Events that happen between turns (index sync, file watching, git sync), for the TUI."""
        async for event in merged(self.recall.events(), self.sync.events()):
            yield event

    def pending_events(self) -> list[Event]:
        """The background events come since they were last taken (index sync, git sync), for a
        front end that does not watch `background_events` (headless)."""
        return [*self.recall.drain(), *self.sync.drain()]

    async def aclose(self) -> None:
        try:
            self.conversation.save()
        except OSError as error:  # a full disk: the turn said so; closing must still close
            if error.errno not in DISK_ERRNOS:
                raise
        await self.sync.aclose()
        await self.workbench.aclose()
        await self.recall.aclose()
        for recall in self._scope_recalls:
            await recall.aclose()

    # --- bookkeeping ----------------------------------------------------------------------

    def usage(self) -> UsageUpdated:
        return self.loop.usage()

"""CairnApp: the TUI shell around one agent. Layout in app.tcss, routing in bridge.py."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from pathlib import Path
from typing import ClassVar

from textual import events, on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.worker import Worker, WorkerState

from shell import commands
from shell.events import Error, Event
from shell.session.trace import TraceWriter
from widgets import collector
from widgets.bridge import EventBridge
from widgets.editor import edit_memory
from widgets.idle import IdleSpell
from widgets.keys import CairnFooter, KeysApp
from widgets.messages import AgentEvent
from widgets.palette import TUI_COMMAND_ACTIONS, CairnCommands
from widgets.panes.git_log import machine_of
from widgets.panes.side import SidePanes
from widgets.panes.strip import SideStrip
from widgets.prompt import Prompt
from widgets.resume import show_history
from widgets.screens.approval import ApprovalBar
from widgets.screens.main import MainScreen
from widgets.source import AgentPlan, AgentSource, planned_memory
from widgets.status.bar import StatusBar
from widgets.transcript import Transcript

IDLE_CHECK_S = 30.0
"""How often the TUI checks whether it has been idle long enough to dream or collect."""
CANCEL_GRACE_S = 5.0
"""How long a cancelled turn has to reach its next safe point before its stream is cancelled."""


class CairnApp(KeysApp):
    """The Cairn TUI: transcript, memory panes, meters, and a prompt, driven by one agent."""

    CSS_PATH = "app.tcss"
    TITLE = "Cairn"
    AUTO_FOCUS = "#prompt"
    COMMANDS = App.COMMANDS | {CairnCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel_turn", "Cancel", show=False),  # the footer's ^c says Cancel
        Binding("ctrl+l", "clear_view", "Clear"),
        Binding("f2", "toggle_side", "Panes"),
        Binding("f3", "review", "Review"),
        Binding("f4", "edit_memory", "Edit"),
        Binding("f5", "history", "History"),
        Binding("f6", "resolve_conflicts", "Conflicts"),
        Binding("f7", "why", "Why"),
        Binding("ctrl+t", "cycle_theme", "Theme"),
    ]

    def __init__(
        self,
        agent: AgentSource | AgentPlan,
        *,
        trace: Path | None = None,
        theme_dir: Path | None = None,
        config_dir: Path | None = None,
        after_first_frame: Callable[[], object] | None = None,
    ) -> None:
        super().__init__(theme_dir=theme_dir, config_dir=config_dir)
        self.agent: AgentSource
        self._plan = agent if isinstance(agent, AgentPlan) else None
        """The agent to build once the first frame is on screen; None once built."""
        if not isinstance(agent, AgentPlan):
            self.agent = agent
        self.build_error: Exception | None = None
        """Why the planned agent could not be built (the app then quits; `cairn` says it)."""
        self._after_first_frame = after_first_frame
        self.trace_path = trace
        self._busy = False
        self.queued: deque[str] = deque()
        self._trace: TraceWriter | None = None
        self._bridge: EventBridge | None = None
        self.idle = IdleSpell()

    def get_default_screen(self) -> MainScreen:
        return MainScreen(id="_default")

    def compose(self) -> ComposeResult:
        # The width classes go on before the widgets mount, so their styles apply once.
        self._sync_width(self.size.width)
        source = self._plan or self.agent
        settings, budget = source.settings, source.budget
        yield StatusBar(
            model=settings.model,
            demo=settings.demo,
            session_id="" if self._plan else self.agent.session_id,
            window=budget.window,
            flush_threshold=budget.flush_threshold,
            compaction_threshold=budget.compaction_threshold,
            id="status",
        )
        with Horizontal(id="main"):
            yield Transcript(id="transcript")
            here = machine_of(settings.git_author_email)
            memory, scope = planned_memory(settings)
            git = None if self._plan else self.agent.own.git
            yield SidePanes(
                memory,
                settings.today,
                git,
                here=here,
                watched=settings.watch,
                scope=scope,
                global_memory=None if scope == "global" else settings.workspace,
                id="side",
            )
        yield SideStrip(id="strip")
        yield ApprovalBar(id="approval-bar")
        yield Prompt(id="prompt")
        yield CairnFooter()

    @on(events.Mount)
    async def _mounted(self) -> None:
        if self.trace_path is not None:
            self._trace = TraceWriter(self.trace_path)
        # The agent is built (from a plan) and started once the first frame is on screen, so
        # nothing competes with painting; until then a prompt sent (or typed ahead) is queued.
        self._set_busy(True)
        shown = (self.transcript, self.status_bar, self.side_panes, self.query_one(SideStrip))
        bridge = self._bridge = EventBridge(*shown, approvals=self.query_one(ApprovalBar))
        # A resumed session's past is in that frame (one layout, not a frame and then another).
        await show_history(self._plan or self.agent, bridge)
        if self._after_first_frame is not None:
            self.call_after_refresh(self._after_first_frame)
        self.call_after_refresh(self._start_agent)
        self.set_interval(IDLE_CHECK_S, self._when_idle)

    async def _start_agent(self) -> None:
        if self._plan is not None:
            try:
                self.agent = self._plan.build()
            except Exception as error:  # the app quits, and `cairn` says why
                self.build_error = error
                self.exit(return_code=1)
                return
            self._plan = None
            settings = self.agent.settings
            self.status_bar.show_session(
                model=settings.model, session_id=self.agent.session_id, demo=settings.demo
            )
            await self.side_panes.attach_history(self.agent.own)
        # A trace played back holds its decisions: it asks no one.
        if self._bridge is not None and not self.agent.playback:
            self._bridge.answer = self.agent.answer_approval
        self.run_events(self.agent.start)
        self.run_background(self.agent.background_events)

    def _when_idle(self) -> None:
        if self.idle.reclaim_due(collector.RECLAIM_IDLE_S, busy=self.busy):
            collector.reclaim()
        dreaming = (self._plan or self.agent).settings.dreaming
        if dreaming.enabled and dreaming.idle_minutes > 0 and self.started:
            self.dream_if_idle()

    def dream_if_idle(self) -> bool:
        """Sweep once after `[dreaming] idle_minutes` without a key or a turn, never during
        one. Returns whether a sweep started."""
        if not self.idle.dream_due(self.agent.settings.dreaming.idle_minutes, busy=self.busy):
            return False
        self.run_events(lambda: self.agent.dream("idle"))
        return True

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key):  # the app sees every key first, the prompt's too
            self.idle.active()
            bar = self.query_one_optional(ApprovalBar)  # None before the first compose
            if bar is not None and await bar.key(event):
                return  # it opened the approval waiting
        await super().on_event(event)

    async def on_unmount(self) -> None:
        collector.release()
        if self._trace is not None:
            self._trace.close()
            self._trace = None
        if self.started:
            await self.agent.aclose()

    @property
    def started(self) -> bool:
        """Whether the agent is built (it is from the start unless the app was given a plan)."""
        return self._plan is None

    def _has_agent(self) -> bool:
        """For an action that needs the agent: whether it is built, else say so."""
        if not self.started:
            self.notify("Cairn is still starting; try again in a moment.", timeout=3)
        return self.started

    @property
    def transcript(self) -> Transcript:
        return self.query_one(Transcript)

    @property
    def status_bar(self) -> StatusBar:
        return self.query_one(StatusBar)

    @property
    def side_panes(self) -> SidePanes:
        return self.query_one(SidePanes)

    @property
    def prompt(self) -> Prompt:
        return self.query_one(Prompt)

    # --- running the agent ------------------------------------------------------------------

    @work(exclusive=True, group="agent", exit_on_error=False)
    async def run_events(self, make_stream: Callable[[], AsyncIterator[Event]]) -> None:
        """Consume one core stream (start or a submit), posting each event for the bridge."""
        self._set_busy(True)
        try:
            async with aclosing(make_stream()) as stream:  # type: ignore[type-var]
                async for event in stream:
                    self._record(event)
                    self.post_message(AgentEvent(event))
        except Exception as error:  # a core bug is shown, never a crashed TUI
            crash = Error(kind="crash", message=f"{type(error).__name__}: {error}")
            self.post_message(AgentEvent(crash))

    @work(group="background", exit_on_error=False)
    async def run_background(self, make_stream: Callable[[], AsyncIterator[Event]]) -> None:
        """Consume events that happen between turns (index sync, file watching)."""
        try:
            async with aclosing(make_stream()) as stream:  # type: ignore[type-var]
                async for event in stream:
                    self._record(event)
                    self.post_message(AgentEvent(event, background=True))
        except Exception as error:
            self.post_message(AgentEvent(Error(kind="background", message=str(error))))

    def _record(self, event: Event) -> None:
        if self._trace is not None:
            self._trace.write(event)

    async def on_agent_event(self, message: AgentEvent) -> None:
        # Quitting takes the widgets down first: an event that comes after (a background index
        # sync) is in the trace already and has no widget left to show it.
        if self._bridge is not None and self.is_running:
            await self._bridge.route(message.event, background=message.background)

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "agent" or not event.worker.is_finished or not self.is_running:
            return  # quitting cancels the turn under way; its widgets are already gone
        self.transcript.forget_echoes()
        self.idle.ended()
        if event.state == WorkerState.CANCELLED:
            if self._bridge is not None:
                self._bridge.close_approvals()
            await self.transcript.end_turn()
            await self.transcript.add_notice("turn cancelled", "warning")
        self._set_busy(False)
        self.call_after_refresh(collector.settle)  # once the turn's last frame is painted
        if self.queued and event.state != WorkerState.CANCELLED:
            await self._submit(self.queued.popleft())

    @property
    def busy(self) -> bool:
        """Whether a stream the user started (or the agent's start) runs: prompts wait."""
        return self._busy

    def _set_busy(self, busy: bool) -> None:
        self._busy = busy
        self.prompt.show_busy(busy)
        self.busy_changed()

    @on(Prompt.Submitted, "#prompt")
    async def prompt_submitted(self, event: Prompt.Submitted) -> None:
        text = event.value.strip()  # the prompt cleared itself: keys typed since stay
        if not text:
            playback = self.agent.playback if self.started else None
            if playback is not None and playback.stepped and not self.busy:
                self.run_events(lambda: self.agent.submit(""))  # replay: next turn
            return
        self.prompt.remember(text)
        invocation = commands.parse(text)
        if invocation is not None and invocation.command and invocation.command.tui_only:
            await self._run_tui_command(invocation.command, invocation.argument)
            return
        if self.busy:
            self.queued.append(text)
            await self.transcript.add_queued(text, len(self.queued))
            return
        await self._submit(text)

    async def _run_tui_command(self, command: commands.Command, argument: str = "") -> None:
        """A command of `shell.commands` that acts on the screen (`tui_only`); one that takes
        an argument (`/why FILE:LINE`) gives its action what follows it."""
        action, given = TUI_COMMAND_ACTIONS[command.name], argument.strip()
        await self.run_action(f"{action}({given!r})" if command.args and given else action)

    async def _submit(self, text: str) -> None:
        await self.transcript.echo_user(text)
        self.run_events(lambda: self.agent.submit(text))

    # --- actions ----------------------------------------------------------------------------

    async def action_cancel_turn(self) -> None:
        """Esc: close the keys panel or the panes overlay if one is open, else cancel the turn."""
        if self.help_panel_open:
            self.action_hide_help_panel()
            self.prompt.focus()
            return
        if self.side_overlay_open:
            self.action_toggle_side()
            return
        if self.busy:
            self.queued.clear()
            if self.started:
                self._cancel_turn()
            await self.transcript.drop_queued()

    def _cancel_turn(self) -> None:
        """Ask the core to stop the turn at its next safe point: a running tool finishes and
        its card shows its result, the turn ends with a receipt. A stream the core cannot stop
        (the start, a /compact), or one still running CANCEL_GRACE_S later, is cancelled."""
        running = [w for w in self.workers if w.group == "agent" and not w.is_finished]
        if not self.agent.cancel():
            self.workers.cancel_group(self, "agent")
            return

        def force() -> None:
            for worker in running:
                worker.cancel()  # a no-op for a worker that has finished

        self.set_timer(CANCEL_GRACE_S, force)

    async def action_review(self) -> None:
        """Open dreaming's review queue (F3, /review)."""
        if not self._has_agent():
            return
        previews = await asyncio.to_thread(self.agent.open_proposals)
        if not previews:
            self.notify("Nothing waits for review. /dream runs a sweep.", timeout=3)
            return
        from widgets.screens.dream_review import DreamReview  # loaded when first opened

        await self.push_screen(DreamReview(previews, self))

    async def action_history(self, sha: str = "") -> None:
        """Memory history: commits, diffs, revert (F5, /history, a click on a write card)."""
        from widgets.screens.history import HistoryScreen  # loaded when first opened

        shown = self.side_panes.workspace  # the memory the panes show: the session's own
        await self.push_screen(HistoryScreen(self, shown, select=sha))

    async def action_why(self, place: str = "") -> None:
        """Where a memory line came from (F7, `/why [FILE:LINE]`): `widgets.screens.why`."""
        from widgets.screens.why import open_why  # loaded when first opened

        hits = self._bridge.hits if self._bridge is not None else []
        await open_why(self, (self._plan or self.agent).settings, hits, place)

    async def action_resolve_conflicts(self, file: str = "") -> None:
        """The open sync conflicts, each settled with one key (F6, a click on its block)."""
        if not self._has_agent():
            return
        if not (conflicts := self.status_bar.sync.conflicts):
            self.notify("No sync conflict is open.", timeout=3)
            return
        from widgets.screens.conflict import ConflictScreen  # loaded when first opened

        await self.push_screen(ConflictScreen(conflicts, self, select=file))

    async def action_edit_memory(self) -> None:
        """F4: the memory file in view in $EDITOR; the saved edit is committed as the user's."""
        if not self._has_agent():
            return
        await edit_memory(self)

    async def action_clear_view(self) -> None:
        await self.transcript.clear_view()

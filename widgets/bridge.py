"""The one place where core events become widget changes (the sync's, through `sync_view.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, assert_never

from shell.events import (
    AnswerSourced,
    ApprovalDecided,
    ApprovalRequested,
    AssistantMessage,
    BootstrapMissing,
    BootstrapTruncated,
    CommandFinished,
    CommandOutput,
    CompactionFailed,
    CompactionFinished,
    CompactionSkipped,
    CompactionStarted,
    CompactionTrigger,
    ContextReinjected,
    ContextReport,
    DeepSleepFinished,
    DreamProposed,
    DreamSweepFinished,
    DreamSweepSkipped,
    DreamSweepStarted,
    Error,
    Event,
    FileEdited,
    FlushFinished,
    FlushGateEvaluated,
    FlushStarted,
    GitLockCleared,
    HelpShown,
    IndexRebuilt,
    IndexSynced,
    IndexSyncProgress,
    LightSleepFinished,
    Loading,
    McpCallServed,
    McpServerChanged,
    MemoryForgotten,
    MemoryWritten,
    ModelRetry,
    Notice,
    ProposalAccepted,
    ProposalRejected,
    ProposalsWaiting,
    RemSleepFinished,
    SearchHit,
    SearchPerformed,
    SecretsRedacted,
    SessionStarted,
    StartupPreludeInjected,
    SyncCloned,
    SyncConflict,
    SyncFailed,
    SyncFinished,
    SyncForgotten,
    SyncRecovered,
    SyncRedacted,
    SyncRedactionPreviewed,
    SyncRemoteAdded,
    SyncResolved,
    SyncStatusChanged,
    TextCallsRead,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolCallStopped,
    ToolsListed,
    TurnCancelled,
    TurnFinished,
    TurnsDropped,
    TurnStarted,
    UsageUpdated,
)
from shell.text import short_sha
from widgets.cards.blocks import (
    CompactionReceipt,
    ContextBlock,
    FlushBlock,
    MemoryWriteLine,
    ReinjectionBlock,
)
from widgets.cards.dream_block import DreamBlock
from widgets.cards.tools_block import ToolsBlock
from widgets.format import cancel_receipt, dropped_text, help_lines, mcp_notice, tokens
from widgets.index_view import IndexView
from widgets.keys import key_lines
from widgets.sync_view import SyncView

if TYPE_CHECKING:
    from widgets.panes.side import SidePanes
    from widgets.panes.strip import SideStrip
    from widgets.screens.approval import Answer, ApprovalBar
    from widgets.status.bar import StatusBar
    from widgets.transcript import Transcript


MAX_HITS = 60  # the session's latest search hits the why screen lists


class EventBridge:
    """Routes each core event to the widgets that show it. Holds the little state that spans
    events (the open flush block, the open compaction receipt, the open dreaming sweep); the
    sync's events go to `SyncView`, the index's to `IndexView`."""

    def __init__(
        self,
        transcript: Transcript,
        status: StatusBar,
        side: SidePanes,
        strip: SideStrip | None = None,
        *,
        answer: Answer | None = None,
        approvals: ApprovalBar | None = None,
    ) -> None:
        self.transcript = transcript
        self.status = status
        self.side = side
        self.strip = strip
        """The one-line side area of narrow terminals (fed the same events as the panes)."""
        self._flush: FlushBlock | None = None
        self._compaction: CompactionReceipt | None = None
        self._dream: DreamBlock | None = None
        self.answer = answer
        """Where the user's approvals go (`Agent.answer_approval`); None: no modal (a replay)."""
        self.live = True
        """False while a resumed session's past is shown: what it asked was answered then."""
        self.approvals = approvals
        """Where a call waits for the user (the bar above the prompt, which opens the modal)."""
        self._sync = SyncView(transcript, status, side, strip)
        self._index = IndexView(transcript, status, side)
        self.hits: list[SearchHit] = []  # newest first, for the why screen

    async def route(self, event: Event, *, background: bool = False) -> None:
        """Show `event`; `background`: it came between turns, not from what the user started."""
        transcript = self.transcript
        match event:
            case SessionStarted(session_id=session_id, resumed=resumed, model=model, demo=demo):
                self.status.show_session(model=model, session_id=session_id, demo=demo)
                verb = "resumed" if resumed else "started"
                await transcript.add_notice(f"session {session_id} {verb} · {event.workspace}")
                if self.strip is not None and not resumed:
                    self.strip.session_started()
            case TurnStarted(prompt=prompt):
                await transcript.add_turn_prompt(prompt)
            case TextDelta(text=text):
                await transcript.append_text(text)
            case TextCallsRead():  # the text shown was the calls: their cards follow
                await transcript.discard_partial()
            case AssistantMessage(text=text):
                await transcript.finish_text(text)
            case ToolCallStarted():
                await transcript.start_tool(event)
            case ToolCallFinished():
                await transcript.finish_tool(event)
            case ToolCallStopped():
                await transcript.stop_tool(event)
            case ApprovalRequested():
                await transcript.ask_approval(event)
                self._ask(event)
            case ApprovalDecided():
                await transcript.decide_approval(event)
                if self.approvals is not None:
                    self.approvals.decided(event.call_id)
            case CommandOutput():
                await transcript.command_output(event)
            case CommandFinished():
                await transcript.command_finished(event)
            case FileEdited():
                await transcript.file_edited(event)
            case McpServerChanged(server=server):
                text, level = mcp_notice(server)
                await transcript.add_notice(text, level)
            case McpCallServed(client=client, tool=tool, error=error):
                # only in the replay of a `cairn mcp --trace`: the calls it served
                served = f"{tool} served to {client} over MCP"
                await transcript.add_notice(f"{served}: {error}" if error else served)
            case ToolsListed():
                await transcript.add_block(ToolsBlock(event))
            case TurnCancelled():
                if event.stopped_during == "model_call":
                    await transcript.cut_partial()
                await transcript.add_notice(cancel_receipt(event), "warning")
            case HelpShown():
                lines = ["commands:", *help_lines(event), "", "keys:", *key_lines()]
                await transcript.add_notice("\n".join(lines))
            case SearchPerformed():
                await transcript.show_search(event)
                self.hits = [*event.hits, *self.hits][:MAX_HITS]
            case UsageUpdated():
                self.status.meter.follow(event)
                self.status.lookahead.show_usage(
                    event.prompt_tokens,
                    event.flush_threshold,
                    event.compaction_threshold,
                    flushed=event.cycle_flushed,
                )
            case Loading(what=what, done=done):
                self.status.show_loading(what, done=done)
            case ModelRetry():
                if event.discard_partial:
                    await transcript.discard_partial()
                await transcript.add_notice(
                    f"retrying ({event.attempt}/{event.max_attempts}) in {event.delay_s:g} s:"
                    f" {event.reason}"
                )
            case Error(kind=kind, message=message):
                if event.discard_partial:
                    await transcript.discard_partial()
                await transcript.add_notice(f"error ({kind}): {message}", "error")
            case Notice(message=message, level=level):
                await transcript.add_notice(message, level)
            case AnswerSourced(citation=citation, snippet=snippet):
                await transcript.add_notice(f"source (matched by Cairn): {citation} · {snippet}")
            case TurnFinished(reason=reason):
                self.close_approvals()
                await transcript.end_turn()
                if self.live:  # a past turn's prompt size is not in the view log
                    self.status.lookahead.end_turn()
                if reason not in ("completed", "cancelled"):  # a cancel has its receipt
                    await transcript.add_notice(f"turn ended: {reason}", "warning")
            case BootstrapTruncated():
                await transcript.add_notice(
                    f"{event.file} truncated for the prompt: kept {event.kept_chars} of"
                    f" {event.original_chars} chars ({event.reason} budget)",
                    "warning",
                )
            case BootstrapMissing(file=file):
                await transcript.add_notice(f"{file} is missing; the prompt goes without it")
            case MemoryWritten():
                await transcript.add_block(MemoryWriteLine(event))
                # a past write: the panes show the files as they are now; they show the
                # session's own memory (and the global MEMORY.md beside a project's)
                if self.live and event.scope in (self.side.scope, "global"):
                    await self.side.memory_written(event.path, event.lines_added, event.scope)
                if self.strip is not None:
                    self.strip.memory_written(event, shown=self.live)
            case SecretsRedacted(path=path, kinds=kinds):
                await transcript.add_notice(
                    f"redacted from {path} before the commit: {', '.join(kinds)}", "warning"
                )
            case GitLockCleared(path=path, age_s=age_s):
                await transcript.add_notice(
                    f"cleared a stale git lock {path} ({age_s:.0f} s old)", "warning"
                )
            case IndexSyncProgress() | IndexSynced() | IndexRebuilt():
                await self._index.route(event)
            case FlushGateEvaluated() if not self.live:
                self.side.decisions.append(event)  # the log shows the past once (`end_past`)
                if self.strip is not None:
                    self.strip.gate_evaluated(event, shown=False)
            case FlushGateEvaluated():
                await self.side.add_gate_decision(event)
                if self.strip is not None:
                    self.strip.gate_evaluated(event)
            case FlushStarted():
                self._flush = FlushBlock(event.target, event.cycle, event.trigger)
                await transcript.add_block(self._flush)
            case FlushFinished():
                if self._flush is None:
                    self._flush = FlushBlock(event.target, event.cycle)  # a trace begun mid-flush
                    await transcript.add_block(self._flush)
                self._flush.finish(event)
                self._flush = None
            case CompactionSkipped(reason=reason):
                self.status.meter.follow(event)
                if self._compaction is not None:
                    self._compaction.skip(reason)
                    self._compaction = None
                else:
                    await transcript.add_notice(f"compaction skipped: {reason}")
            case CompactionStarted():
                self.status.meter.follow(event)
                self._compaction = CompactionReceipt(event)
                await transcript.add_block(self._compaction)
            case CompactionFinished():
                self.status.meter.follow(event)
                self.status.compactions.count = event.compaction_count
                receipt = await self._open_receipt(event.trigger, event.tokens_before)
                receipt.finish(event)
            case CompactionFailed():
                self.status.meter.follow(event)
                receipt = await self._open_receipt(event.trigger, 0)
                receipt.fail(event)
            case TurnsDropped():
                await transcript.add_notice(dropped_text(event), "warning")
            case ContextReport():
                await transcript.add_block(ContextBlock(event))
            case ContextReinjected():
                await transcript.add_block(ReinjectionBlock(event))
            case StartupPreludeInjected(files=files, chars=chars):
                names = ", ".join(files) or "none"
                await transcript.add_notice(
                    f"startup prelude: recent notes {names} ({tokens(chars)} chars) as background"
                )
            case DreamSweepStarted():
                self._dream = DreamBlock(event)
                await transcript.add_block(self._dream)
            case LightSleepFinished() | RemSleepFinished() | DeepSleepFinished():
                if self._dream is not None:
                    self._dream.phase(event)
            case DreamProposed():
                if self._dream is not None:
                    self._dream.proposed(event)
            case DreamSweepFinished(open=waiting):
                if self._dream is not None:
                    self._dream.finish(event)
                self._dream = None
                self.status.show_review(waiting)
            case DreamSweepSkipped(reason="failed") if self._dream is not None:
                self._dream.fail(event)
                self._dream = None
            case DreamSweepSkipped(detail=detail):
                await transcript.add_notice(f"dreaming skipped: {detail}", "warning")
            case ProposalsWaiting(count=count):
                self.status.show_review(count)
            case ProposalAccepted(proposal=proposal, text=text, commit=commit, open=waiting):
                await transcript.add_notice(
                    f"accepted {proposal.id} into MEMORY.md → {short_sha(commit)}: {text}"
                )
                if event.budget.over:
                    await transcript.add_notice(
                        f"MEMORY.md is {event.budget.chars:,} characters, over its "
                        f"{event.budget.budget:,}-character share of the prompt: its end is cut",
                        "warning",
                    )
                self.status.show_review(waiting)
            case ProposalRejected(proposal=proposal, open=waiting):
                await transcript.add_notice(
                    f"rejected {proposal.id}; it will not be proposed again: {proposal.text}"
                )
                self.status.show_review(waiting)
            case (
                SyncRemoteAdded()
                | SyncCloned()
                | SyncRecovered()
                | SyncConflict()
                | SyncFinished()
                | SyncFailed()
                | SyncResolved()
                | SyncRedactionPreviewed()
                | SyncRedacted()
                | SyncForgotten()
                | MemoryForgotten()
                | SyncStatusChanged()
            ):
                await self._sync.route(event, background=background)
            case _:
                assert_never(event)  # a new event type needs a case here (mypy checks)

    def end_past(self) -> list[str]:
        """A resumed session's past is routed (with `live` False): what was under way when
        Cairn was closed is interrupted (live events must not finish it); returns what was.
        The strip shows the past's last write and decision; the gate log shows its decisions
        on `side.show_decisions()`."""
        if self.strip is not None:
            self.strip.show_last()
        open_parts: dict[str, object] = {"a memory flush": self._flush}
        open_parts |= {"a compaction": self._compaction, "a dreaming sweep": self._dream}
        self._flush = self._compaction = self._dream = None
        said = [name for name, block in open_parts.items() if block is not None]
        calls = self.transcript.interrupt_open_calls()
        if calls:
            said.insert(0, f"{calls} tool call(s)")
        return said

    def _ask(self, event: ApprovalRequested) -> None:
        """A call waits now (never one in the past): the bar shows it, the user opens it."""
        if self.answer is not None and self.live and self.approvals is not None:
            self.approvals.wait(event, self.answer)

    def close_approvals(self) -> None:
        """Close every approval still waiting (its turn ended, or its stream was cut)."""
        if self.approvals is not None:
            self.approvals.close_all()

    async def _open_receipt(
        self, trigger: CompactionTrigger, tokens_before: int
    ) -> CompactionReceipt:
        receipt = self._compaction
        if receipt is None:  # a trace that begins mid-compaction
            receipt = CompactionReceipt(CompactionStarted(trigger, tokens_before))
            await self.transcript.add_block(receipt)
        self._compaction = None
        return receipt

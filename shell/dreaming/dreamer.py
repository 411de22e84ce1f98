"""Dreaming for one workspace: sweeps that fill the review queue, and the decisions on it.

A sweep (`sweep`) folds the hit log, runs the light, REM and deep phases, distils what passed
(one model call, or by rule), stores the proposals and writes a block into DREAMS.md. Nothing
enters MEMORY.md until a person accepts a proposal (`accept`), each acceptance one commit;
a rejection (`reject`) is remembered by content.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from shell.config import Settings
from shell.dreaming import diary
from shell.dreaming.junk import statement
from shell.dreaming.origins import traced, untraced
from shell.dreaming.review import (
    Decision,
    Preview,
    StaleProposal,
    applied,
    budget_refusal,
    changed_lines,
    check_only_its_line,
    commit_summary,
)
from shell.dreaming.saving import save_sweep
from shell.dreaming.state import MAX_OPEN, Record, StateStore
from shell.events import (
    DreamProposed,
    DreamSweepFinished,
    DreamSweepSkipped,
    DreamSweepStarted,
    DreamTrigger,
    Error,
    Event,
    MemoryBudget,
    Notice,
    Proposal,
    ProposalAccepted,
    ProposalRejected,
)
from shell.fsio import LockBusy
from shell.memory.files.door import CURATED_FILE, DIARY_FILE, MemoryFiles
from shell.memory.files.values import Edit, MemoryWriteError, WriteOutcome, written_facts
from shell.memory.hit_log import dreams_dir
from shell.memory.provenance import Provenances
from shell.secrets.door import redacted
from shell.text import collapse, normalized
from shell.workspace import bootstrap_budgets, memory_room

if TYPE_CHECKING:
    from shell.dreaming.sweep import Plan
    from shell.git.store import GitStore
    from shell.memory.service import RecallService
    from shell.model import LLM


class Dreamer:
    """Args:
    settings: the workspace, the clock and the `[dreaming]` settings.
    files: the one door for memory writes (MEMORY.md and DREAMS.md are written through it).
    git: the workspace's history (when each MEMORY.md line was written).
    recall: the index and the hit log.
    llm: the model that distils; None distils by rule.

    `window` (of `sweep` and the review) is the context window now: it sizes the model call and
    MEMORY.md's share of the bootstrap.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        files: MemoryFiles,
        git: GitStore,
        recall: RecallService,
        llm: LLM | None,
    ) -> None:
        self.settings = settings
        self.config = settings.dreaming
        self.files = files
        self.git = git
        self.recall = recall
        self.llm = llm
        self.store = StateStore(dreams_dir(settings.workspace))

    # --- sweeping ----------------------------------------------------------------------------

    async def sweep(self, trigger: DreamTrigger, *, window: int) -> AsyncGenerator[Event]:
        """One sweep, as events: started, each phase, each proposal, finished (or skipped)."""
        from shell.dreaming.distill import DistilCall, distil_by_rule
        from shell.dreaming.sweep import sweep_id

        if not self.config.enabled:
            yield DreamSweepSkipped("disabled", "dreaming is off (set [dreaming] enabled = true)")
            return
        with contextlib.ExitStack() as held:
            try:
                held.enter_context(self.store.sweeping())
            except LockBusy:
                yield DreamSweepSkipped("busy", "another Cairn process is dreaming right now")
                return
            started, now = self.settings.timer(), self.settings.clock()
            sweep = sweep_id(now)
            yield DreamSweepStarted(sweep, trigger)
            try:
                plan: Plan | Exception = await asyncio.to_thread(self._plan, now)
            except Exception as error:  # a broken index or state must not break the session
                plan = error
            for notice in self.notices():
                yield notice
            if isinstance(plan, Exception):
                yield DreamSweepSkipped("failed", f"the sweep failed: {plan}")
                return
            yield plan.light.event
            yield plan.rem.event
            distilled = distil_by_rule(plan.drafts)
            if self.llm is not None and plan.drafts:
                call = DistilCall(
                    self.llm,
                    plan.drafts,
                    window=window,
                    max_tokens=self.config.max_proposal_tokens,
                )
                async for event in call.events():
                    yield event
                distilled = call.results(plan.known.dreamed)
            drafted = plan.proposals(distilled, self.config)
            proposals = await asyncio.to_thread(self._traced, drafted, commit=True)
            deep = plan.finished(sum(d.by_model for d in distilled.values()), len(proposals))
            yield deep
            for proposal in proposals:
                yield DreamProposed(proposal)
            try:
                written, diary_text, open_count = await asyncio.to_thread(
                    save_sweep, self.store, self.files, sweep, now, plan, deep, proposals
                )
            except Exception as error:
                yield DreamSweepSkipped("failed", f"the sweep could not be saved: {error}")
                return
            for outcome in written:
                yield outcome.event
            yield DreamSweepFinished(
                sweep_id=sweep,
                outcome="written" if written else "nothing_new",
                proposed=len(proposals),
                open=open_count,
                diary=diary_text,
                duration_ms=round((self.settings.timer() - started) * 1000, 1),
            )

    def _plan(self, now: datetime) -> Plan:
        """The phases, in a worker thread (they read the index, the files and git)."""
        from shell.dreaming.cited import stale_citations_of
        from shell.dreaming.deep import Known, deep_sleep
        from shell.dreaming.light import light_sleep
        from shell.dreaming.notes import Notes
        from shell.dreaming.rem import rem_sleep
        from shell.dreaming.sweep import Plan
        from shell.dreaming.updates import overtaken, superseded
        from shell.dreaming.vectors import StatementVectors

        index = self.recall.index
        embedder = index.embedder
        vectors = StatementVectors(
            self.store.folder / "vectors.npz", embedder.name, embedder.dim, embedder.embed
        )
        notes = Notes(index, vectors)
        hit_log = self.recall.hit_log
        recalled = hit_log.fold() if hit_log is not None else []
        state = self.store.read()
        known = Known.of(
            self.files.text(CURATED_FILE),
            rejected=state.rejected,
            accepted=state.accepted,
            dreamed=[*state.dreamed, *diary.prose_lines(self.files.text(DIARY_FILE))],
            embed=vectors.of,
        )
        today = now.date()
        light = light_sleep(notes, recalled, today, self.config, known.dreamed)
        rem = rem_sleep(notes, recalled, today, self.config, known.dreamed)
        deep = deep_sleep(
            recalled, notes, now, self.config, light=light.hits, rem=rem.hits, known=known
        )
        related = vectors.related
        updates = superseded(notes, self.git.line_times, now, self.config, known, related)
        open_ = state.open()
        plan = Plan(
            light,
            rem,
            deep,
            updates,
            known,
            {r.proposal.id for r in open_},
            open_records=open_,
            overtaken=overtaken([c.unit for c in deep.passed], notes, now, self.config, related),
        )
        plan.draft(min(self.config.limit, max(0, MAX_OPEN - len(open_))))
        plan.cited = stale_citations_of(self.files, limit=self.config.limit)
        vectors.save()
        return plan

    # --- the review queue ----------------------------------------------------------------------

    def waiting(self) -> int:
        """How many proposals wait for review (0 while dreaming is off)."""
        return len(self.store.read().open()) if self.config.enabled else 0

    def open_proposals(self, *, window: int) -> list[Preview]:
        """The proposals waiting for review, oldest first, each with what accepting it does."""
        memory = self.files.text(CURATED_FILE)
        records = self.store.read().open()
        proposals = self._traced([r.proposal for r in records])
        return [self._preview(proposal, memory, window) for proposal in proposals]

    def budget(self, memory: str, window: int) -> MemoryBudget:
        """MEMORY.md of text `memory` against its share of the bootstrap at `window`."""
        room = memory_room(self.settings.workspace, bootstrap_budgets(self.settings, window))
        return MemoryBudget(chars=len(memory.rstrip()), budget=room, window=window)

    def accept(
        self,
        proposal_id: str,
        text: str | None = None,
        *,
        window: int,
        over_budget: bool = False,
        origin: str = "",
    ) -> list[Event]:
        """Accept an open proposal (as `text`, when a person edited it): its line goes into
        MEMORY.md and its DREAMS.md entry says so, in one commit (`origin`: who passed the
        decision on, below the proposal's reason in its message).

        Without `over_budget`, an acceptance that would push MEMORY.md past its bootstrap
        budget is refused with a clear error instead (its tail would be cut from every prompt).
        """
        events: list[Event] = []
        try:
            with self.store.editing() as state:
                record = self._open_record(proposal_id, state.records)
                proposal = record.proposal
                final = redacted(collapse(text)) if text and text.strip() else proposal.text
                for attempt in range(3):  # an editor that saves MEMORY.md meanwhile: again
                    try:
                        applying = self._apply(proposal, final, window, over_budget, origin)
                        break
                    except MemoryWriteError as error:
                        if attempt == 2:
                            return [Error("dream", f"{proposal.id} not accepted: {error}")]
                if isinstance(applying, Error):
                    return [applying]
                written, budget = applying
                commit = written[0].event.commit
                state.records[proposal.id] = replace(
                    record,
                    status="accepted",
                    decided=self.settings.clock().isoformat(),
                    commit=commit,
                    text=final if final != proposal.text else None,
                )
                state.remember("accepted", *record.keys)
                events += written_facts(written)
                events.append(
                    ProposalAccepted(
                        proposal, final, final != proposal.text, commit, len(state.open()), budget
                    )
                )
        except (StaleProposal, LookupError) as error:
            return [Error("dream", str(error))]
        return events

    def _apply(
        self, proposal: Proposal, final: str, window: int, over_budget: bool, origin: str
    ) -> Error | tuple[list[WriteOutcome], MemoryBudget]:
        """MEMORY.md and DREAMS.md as they are now, with the proposal accepted, in one commit:
        both files or neither (`MemoryFiles.rewrite`).

        Raises:
            StaleProposal: the proposal no longer applies.
            MemoryWriteError: a file changed on disk meanwhile; nothing was written.
        """
        if refusal := untraced(self._traced([proposal], commit=True)[0]):
            raise StaleProposal(refusal)
        before = self.files.text(CURATED_FILE)
        after = applied(before, proposal, final, self.settings.clock().date())
        check_only_its_line(proposal, before, after)
        budget = self.budget(after, window)
        if budget.over and not over_budget:
            return Error("dream", budget_refusal(proposal.id, budget))
        journal = self.files.text(DIARY_FILE)
        edits = [Edit(DIARY_FILE, journal, diary.mark(journal, proposal.id, "accepted"))]
        if after != before:  # else MEMORY.md holds its line already: nothing to add
            edits.append(Edit(CURATED_FILE, before, after))  # last: what people watch
        written = self.files.rewrite(
            edits,
            reason="dream",
            summary=commit_summary("accept", proposal, final),
            origin="\n".join(part for part in (proposal.reason, origin) if part),
        )
        return written, budget

    def decide(self, decision: Decision, *, window: int) -> list[Event]:
        """The decision's events, after what reading the state set aside (`notices`)."""
        if decision.action == "reject":
            events = self.reject(decision.proposal_id, origin=decision.origin)
        else:
            events = self.accept(
                decision.proposal_id,
                decision.text,
                window=window,
                over_budget=decision.over_budget,
                origin=decision.origin,
            )
        return [*self.notices(), *events]

    def notices(self) -> list[Notice]:
        """What reading dreaming's state and the hit log skipped or set aside, said once."""
        hit_log = self.recall.hit_log
        return [*self.store.take_notices(), *(hit_log.take_notices() if hit_log else [])]

    def reject(self, proposal_id: str, *, origin: str = "") -> list[Event]:
        """Reject an open proposal: remembered by its source and text, so it does not come back,
        and marked in DREAMS.md (`origin`: who passed the decision on, for its commit)."""
        try:
            with self.store.editing() as state:
                record = self._open_record(proposal_id, state.records)
                proposal = record.proposal
                journal = self.files.text(DIARY_FILE)
                marked = diary.mark(journal, proposal.id, "rejected")
                written = (
                    self.files.rewrite(
                        [Edit(DIARY_FILE, journal, marked)],
                        reason="dream",
                        summary=commit_summary("reject", proposal, proposal.text),
                        origin=origin,
                    )
                    if marked != journal
                    else []
                )
                state.records[proposal.id] = replace(
                    record, status="rejected", decided=self.settings.clock().isoformat()
                )
                state.remember("rejected", *record.keys, normalized(statement(proposal.text)))
        except LookupError as error:
            return [Error("dream", str(error))]
        commit = written[0].event.commit if written else None
        return [*written_facts(written), ProposalRejected(proposal, commit, len(state.open()))]

    # --- internals ---------------------------------------------------------------------------

    def _open_record(self, proposal_id: str, records: dict[str, Record] | None = None) -> Record:
        records = self.store.read().records if records is None else records
        record = records.get(proposal_id.strip())
        if record is None:
            raise LookupError(f"no proposal {proposal_id!r}; `cairn dream` lists the open ones")
        if record.status != "open":
            raise LookupError(f"proposal {proposal_id} is {record.status}, not open")
        return record

    def _traced(self, proposals: list[Proposal], *, commit: bool = False) -> list[Proposal]:
        """Each proposal with where its sources came from (`shell.dreaming.origins`); `commit`:
        a source edited outside Cairn is committed as such first, as the door would at its next
        write (a sweep, an acceptance: never a mere look at the queue)."""
        if commit:
            self.files.commit_outside_edits({s.path for p in proposals for s in p.sources})
        provenances = Provenances(self.git)
        return [traced(proposal, provenances) for proposal in proposals]

    def _preview(self, proposal: Proposal, memory: str, window: int) -> Preview:
        if refusal := untraced(proposal):
            return Preview(proposal, [], self.budget(memory, window), refusal)
        try:
            after = applied(memory, proposal, proposal.text, self.settings.clock().date())
        except StaleProposal as error:
            return Preview(proposal, [], self.budget(memory, window), str(error))
        return Preview(proposal, changed_lines(memory, after), self.budget(after, window))

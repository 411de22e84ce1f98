"""One sweep: light → REM → deep over the hit log and the daily notes, then proposals into the
review queue and a block into DREAMS.md.

The heavy parts (folding the hit log, reading the index, git blame, writing) run in a worker
thread; the one model call (distilling) runs on the event loop like every other call. Nothing is
written until the end: the state first, then DREAMS.md, each atomically, so a sweep cancelled or
killed midway leaves whole files.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime

from shell.config import DreamSettings
from shell.dreaming.deep import Candidate, DeepSleep, Known
from shell.dreaming.distill import Distilled, Draft
from shell.dreaming.junk import statement
from shell.dreaming.light import LightSleep
from shell.dreaming.rem import RemSleep
from shell.dreaming.state import Record
from shell.dreaming.updates import Superseded
from shell.events import (
    DeepSleepFinished,
    JunkKind,
    Proposal,
    SourceRef,
    Stopped,
    StopReason,
)
from shell.secrets.door import redacted
from shell.text import counted, normalized


@dataclass
class Plan:
    """What the phases found, before distilling."""

    light: LightSleep
    rem: RemSleep
    deep: DeepSleep
    updates: list[Superseded]
    known: Known
    open_ids: set[str]
    drafts: list[Draft] = field(default_factory=list)
    sources: dict[str, Candidate | Superseded] = field(default_factory=dict)
    stopped: Counter[tuple[StopReason, JunkKind | None]] = field(default_factory=Counter)
    keys: dict[str, list[str]] = field(default_factory=dict)
    """Per proposal id, the keys of the note units it comes from."""
    open_records: list[Record] = field(default_factory=list)
    replaced: set[str] = field(default_factory=set)
    """Open adds an update of this sweep replaces: the same note, proposed once."""
    overtaken: set[str] = field(default_factory=set)
    """Keys of candidates a later note changes (`updates.overtaken`): never proposed as adds."""
    cited: list[tuple[Proposal, str]] = field(default_factory=list)
    """Updates of MEMORY.md lines whose citation of a project file went stale
    (`shell.dreaming.cited`), each with its key; they need no distilling."""

    def draft(self, limit: int) -> None:
        """The drafts to distil: updates first (a line out of date misleads every session),
        then adds best first; none already open, at most `limit`. A note proposed as an
        update is never also an add (accepting both would write its line twice)."""
        updated = {found.note.key for found in self.updates}
        updated |= {k for r in self.open_records if r.proposal.kind == "update" for k in r.keys}
        items: list[tuple[Draft, Candidate | Superseded]] = []
        for found in self.updates:
            line = found.line.chunk
            draft = Draft(
                f"u{len(items)}",
                "update",
                found.note.chunk.text,
                [found.note.source, SourceRef(line.path, line.start_line, line.end_line)],
                replaces=line.text,
                fact=found.current,
            )
            items.append((draft, found))
        for candidate in self.deep.passed:
            unit = candidate.unit
            if unit.key in updated:
                continue
            if unit.key in self.overtaken:
                self.stopped[("overtaken", None)] += 1
                continue
            items.append(
                (Draft(f"c{len(items)}", "add", unit.chunk.text, [unit.source]), candidate)
            )
        fresh = [(d, s) for d, s in items if proposal_id(d, s) not in self.open_ids]
        self.stopped[("limit", None)] += max(0, len(fresh) - limit)
        for draft, source in fresh[:limit]:
            self.drafts.append(draft)
            self.sources[draft.key] = source

    def _twins(self, draft: Draft, key: str) -> list[str]:
        """The open adds of note unit `key` that `draft`, when an update, replaces."""
        if draft.kind != "update":
            return []
        return [
            r.proposal.id for r in self.open_records if r.proposal.kind == "add" and key in r.keys
        ]

    def proposals(self, distilled: dict[str, Distilled], config: DreamSettings) -> list[Proposal]:
        """The proposals, each with its text, evidence and reason; a text MEMORY.md holds or a
        person rejected before is dropped here too, and so is a text already proposed (one
        proposal per fact)."""
        made: list[Proposal] = []
        texts = {normalized(statement(r.proposal.text)) for r in self.open_records}
        updating = {  # an add that says what an update of this sweep says is that update
            normalized(statement(distilled[d.key].text)) for d in self.drafts if d.kind == "update"
        }
        for draft in self.drafts:
            result, source = distilled[draft.key], self.sources[draft.key]
            key = normalized(statement(result.text))
            unit = source.note if isinstance(source, Superseded) else source.unit
            twins = self._twins(draft, unit.key)
            if key in self.known.memory_lines or (key in texts and not twins):
                self.stopped[("known", None)] += 1
                continue
            if draft.kind == "add" and key in updating:
                self.stopped[("known", None)] += 1
                continue
            if key in self.known.rejected:
                self.stopped[("rejected", None)] += 1
                continue
            proposal = _proposal(draft, source, result, config)
            self.replaced.update(twins)
            self.keys[proposal.id] = [unit.key]
            texts.add(key)
            made.append(proposal)
        replacing = {p.replaces for p in made} | {r.proposal.replaces for r in self.open_records}
        for proposal, key in self.cited:
            if proposal.id in self.open_ids or proposal.replaces in replacing:
                continue  # open already, or the line has an update of its own
            if key in self.known.rejected:
                self.stopped[("rejected", None)] += 1
                continue
            self.keys[proposal.id] = [key]
            made.append(proposal)
        return made

    def finished(self, by_model: int, made: int) -> DeepSleepFinished:
        stops = Counter(self.deep.stopped)
        stops.update(self.stopped)
        return DeepSleepFinished(
            ranked=self.deep.ranked,
            passed=len(self.deep.passed),
            stopped=[
                Stopped(reason, count, junk)
                for (reason, junk), count in sorted(stops.items(), key=lambda i: -i[1])
                if count
            ],
            updates=len(self.updates),
            by_model=by_model,
            by_rule=made - by_model,
        )


def proposal_id(draft: Draft, source: Candidate | Superseded) -> str:
    """Stable across sweeps: the kind, the note it comes from, and the line it replaces."""
    unit = source.note if isinstance(source, Superseded) else source.unit
    seed = f"{draft.kind}|{unit.key}|{draft.replaces or ''}"
    return "d-" + hashlib.sha1(seed.encode("utf-8")).hexdigest()[:6]


def _proposal(
    draft: Draft, source: Candidate | Superseded, result: Distilled, config: DreamSettings
) -> Proposal:
    made = Proposal(  # its text is redacted: it is kept, shown and committed before any review
        id=proposal_id(draft, source),
        kind=draft.kind,
        text=redacted(result.text),
        sources=draft.sources,
        score=0.0,
        reason="",
        distilled_by="model" if result.by_model else "rule",
        fallback=result.fallback,
    )
    if isinstance(source, Superseded):
        line = source.line.chunk
        note_day = source.note.day.isoformat() if source.note.day else "?"
        return replace(
            made,
            score=round(source.similarity, 3),
            reason=redacted(
                f"a newer note ({note_day}) changes what MEMORY.md line {line.start_line} "
                f"(from {source.written.date()}) states: “{source.evidence}”"
            ),
            replaces=line.text,
            replaces_line=line.start_line,
        )
    return replace(
        made,
        score=round(source.score, 3),
        reason=(
            f"recalled {counted(len(source.recalls), 'time')} by "
            f"{counted(source.queries, 'different question')} on {counted(source.days, 'day')} "
            f"within {config.max_age_days} days; score {source.score:.2f} ≥ {config.min_score}"
        ),
        signals=source.signals,
        recalls=len(source.recalls),
        queries=source.queries,
        days=source.days,
    )


def sweep_id(now: datetime) -> str:
    return f"s-{now:%Y%m%d-%H%M%S}"

"""Dreaming: sweeps, their phases, proposals and the decisions on them."""

from __future__ import annotations

from dataclasses import field
from typing import ClassVar, Literal

from shell.events.base import BaseEvent, frozen

# --- dreaming ------------------------------------------------------------------------------

DreamTrigger = Literal["manual", "idle", "cli"]
ProposalKind = Literal["add", "update"]
DistilledBy = Literal["model", "rule"]
StopReason = Literal[
    "not_a_note",
    "gone",
    "junk",
    "too_old",
    "recalls",
    "queries",
    "score",
    "known",
    "rejected",
    "overtaken",
    "limit",
]
"""Why a recalled unit was not proposed: not a daily note (MEMORY.md itself), its source
changed or went, junk (`JunkKind`), its recalls all older than the age limit, too few recalls,
too few distinct queries, a score under the gate, already in MEMORY.md or proposed, rejected
before, changed by a later note, or past the sweep's limit."""
JunkKind = Literal[
    "small_talk",
    "not_a_fact",
    "question",
    "command",
    "heading",
    "metadata",
    "redacted",
    "dreaming",
    "control",
]
"""What is never proposed: small talk, a sentence that states no fact, a question, a command (to
the shell or the assistant), a heading with no body, score or system metadata, a redacted line,
dreaming's own output, and Cairn's control texts (flush and compaction prompts, the prelude)."""


@frozen
class SourceRef:
    """Lines of a memory file a proposal comes from, and the date of the note."""

    path: str
    start_line: int
    end_line: int
    date: str | None = None

    @property
    def citation(self) -> str:
        lines = f"L{self.start_line}"
        if self.end_line != self.start_line:
            lines += f"-L{self.end_line}"
        return f"{self.path}#{lines}"


@frozen
class SourceOrigin:
    """Where a proposal's source line came from (`shell.memory.provenance`): the commit that
    first wrote it, its session and turn when one did; `commit` None when no commit holds it."""

    citation: str
    commit: str | None
    summary: str
    """The step in words ("written · by the model's memory tool · session … turn 3 · …"), or
    why there is none."""
    session: str | None = None
    turn: int | None = None


@frozen
class Signals:
    """The deep phase's six signals (each 0 to 1) and the light and REM phases' boosts."""

    relevance: float
    frequency: float
    diversity: float
    recency: float
    consolidation: float
    richness: float
    light: float = 0.0
    rem: float = 0.0


@frozen
class Proposal:
    """A change dreaming proposes for MEMORY.md; nothing is written until a person accepts it.

    `add` puts `text` under a dated heading; `update` replaces the MEMORY.md line `replaces`
    (line `replaces_line`) that a newer note contradicts or supersedes.
    """

    id: str
    kind: ProposalKind
    text: str
    sources: list[SourceRef]
    score: float
    reason: str
    """Why it qualified, in words."""
    distilled_by: DistilledBy
    fallback: str | None = None
    """Why the text is by rule although a model was asked (None when the model's passed)."""
    signals: Signals | None = None
    """For an add; an update rests on the note that supersedes, not on recalls."""
    recalls: int = 0
    queries: int = 0
    days: int = 0
    replaces: str | None = None
    replaces_line: int | None = None
    origins: list[SourceOrigin] = field(default_factory=list)
    """Where its source lines came from; a proposal none of whose sources has one is not
    accepted."""

    @property
    def traced(self) -> bool:
        return any(origin.commit is not None for origin in self.origins)


@frozen
class Reinforced:
    """A fact of the light phase's notes, and how often it was restated and recalled."""

    text: str
    citation: str
    restated: int
    recalled: int


@frozen
class Theme:
    """A word that recurs in the REM phase's notes, and on how many days."""

    word: str
    mentions: int
    days: int


@frozen
class CandidateTruth:
    text: str
    citation: str
    confidence: float


@frozen
class Stopped:
    """How many recalled units one reason kept from being proposed."""

    reason: StopReason
    count: int
    junk: JunkKind | None = None


@frozen
class DreamSweepStarted(BaseEvent):
    type: ClassVar[str] = "dream_sweep_started"
    sweep_id: str
    trigger: DreamTrigger


@frozen
class LightSleepFinished(BaseEvent):
    """The light phase: the last days' notes, near-duplicates merged, reinforcement counted."""

    type: ClassVar[str] = "light_sleep_finished"
    since: str
    until: str
    notes: int
    units: int
    merged: int
    reinforced: list[Reinforced]


@frozen
class RemSleepFinished(BaseEvent):
    """The REM phase: a week of notes, recurring themes and candidate truths."""

    type: ClassVar[str] = "rem_sleep_finished"
    since: str
    until: str
    notes: int
    themes: list[Theme]
    truths: list[CandidateTruth]


@frozen
class DeepSleepFinished(BaseEvent):
    """The deep phase: recalled units ranked and gated; what stopped the rest."""

    type: ClassVar[str] = "deep_sleep_finished"
    ranked: int
    passed: int
    stopped: list[Stopped]
    updates: int
    by_model: int
    by_rule: int


@frozen
class DreamProposed(BaseEvent):
    type: ClassVar[str] = "dream_proposed"
    proposal: Proposal


@frozen
class DreamSweepFinished(BaseEvent):
    """`outcome`: written (a block went into DREAMS.md), nothing_new (the same as the last
    block, so none was written). `open`: proposals waiting for review, this sweep's and older."""

    type: ClassVar[str] = "dream_sweep_finished"
    sweep_id: str
    outcome: Literal["written", "nothing_new"]
    proposed: int
    open: int
    diary: str
    duration_ms: float


@frozen
class DreamSweepSkipped(BaseEvent):
    """No sweep ran: dreaming is off, another process is sweeping, or the sweep failed (and
    left every file as it was)."""

    type: ClassVar[str] = "dream_sweep_skipped"
    reason: Literal["disabled", "busy", "failed"]
    detail: str


@frozen
class ProposalsWaiting(BaseEvent):
    """At the start of a session: how many of dreaming's proposals wait for review."""

    type: ClassVar[str] = "proposals_waiting"
    count: int


@frozen
class MemoryBudget:
    """MEMORY.md's size against its share of the bootstrap at the current window."""

    chars: int
    budget: int
    window: int

    @property
    def over(self) -> bool:
        return self.chars > self.budget


@frozen
class ProposalAccepted(BaseEvent):
    """A person accepted a proposal: `text` went into MEMORY.md in commit `commit`."""

    type: ClassVar[str] = "proposal_accepted"
    proposal: Proposal
    text: str
    edited: bool
    commit: str | None
    open: int
    budget: MemoryBudget


@frozen
class ProposalRejected(BaseEvent):
    """A person rejected a proposal; it is remembered by content and does not come back."""

    type: ClassVar[str] = "proposal_rejected"
    proposal: Proposal
    commit: str | None
    open: int

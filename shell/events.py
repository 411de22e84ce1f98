"""The event vocabulary: every fact the core reports, as a frozen dataclass.

Events are past-tense facts. Each has a snake_case `type` name, and round-trips through JSON
with `to_json` / `from_json`, so the headless CLI, traces, replay and the TUI all speak the same
language. Add new events here and nowhere else.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import types
import typing
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal


@dataclass(frozen=True)
class BaseEvent:
    type: ClassVar[str] = ""


# --- turns and the model -------------------------------------------------------------------


@dataclass(frozen=True)
class SessionStarted(BaseEvent):
    """A session is ready: new, or resumed from `.cairn/sessions`."""

    type: ClassVar[str] = "session_started"
    session_id: str
    resumed: bool
    model: str
    workspace: str
    demo: bool = False


@dataclass(frozen=True)
class TurnStarted(BaseEvent):
    type: ClassVar[str] = "turn_started"
    session_id: str
    turn: int
    prompt: str


@dataclass(frozen=True)
class TextDelta(BaseEvent):
    """A piece of streamed assistant text."""

    type: ClassVar[str] = "text_delta"
    text: str


@dataclass(frozen=True)
class AssistantMessage(BaseEvent):
    """The assistant's complete text for one model call (after streaming)."""

    type: ClassVar[str] = "assistant_message"
    text: str


@dataclass(frozen=True)
class ToolCallStarted(BaseEvent):
    type: ClassVar[str] = "tool_call_started"
    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ToolCallFinished(BaseEvent):
    type: ClassVar[str] = "tool_call_finished"
    call_id: str
    name: str
    result: str
    error: str | None = None
    duration_ms: float = 0.0


@dataclass(frozen=True)
class UsageUpdated(BaseEvent):
    """How full the context is, from the one ContextBudget.

    `prompt_tokens` is the next prompt as the provider will count it: calibrated by what it
    reported for the last call (`calibrated`), else our own count. `counted_prompt_tokens` is
    our own count; `reported_prompt_tokens` what the provider said for the last call (0 when
    it said nothing).
    """

    type: ClassVar[str] = "usage_updated"
    prompt_tokens: int
    window: int
    flush_threshold: int
    compaction_threshold: int
    breakdown: dict[str, int] = field(default_factory=dict)
    reported_prompt_tokens: int = 0
    completion_tokens: int = 0
    window_source: str = "config"
    counted_prompt_tokens: int = 0
    calibrated: bool = False


@dataclass(frozen=True)
class Loading(BaseEvent):
    """Something the session needs is still loading (`done` false), or has loaded (`done` true):
    said by the start while it loads in the background, and by a model call that has to wait.

    `what`: "model" (the model client's libraries, imported in the background from start-up).
    """

    type: ClassVar[str] = "loading"
    what: str
    done: bool


@dataclass(frozen=True)
class ModelRetry(BaseEvent):
    """A model call failed in a retryable way and will be tried again after `delay_s`.

    `discard_partial` means text already streamed for this call is void: the retry restarts it.
    """

    type: ClassVar[str] = "model_retry"
    attempt: int
    max_attempts: int
    delay_s: float
    reason: str
    discard_partial: bool = False


@dataclass(frozen=True)
class Error(BaseEvent):
    """Something went wrong; `kind` is a short stable name (auth, bad_request, overflow, …).

    `discard_partial` means the text streamed by the failed model call is void, as after a
    `ModelRetry`: it was never stored, and must not read as an answer.
    """

    type: ClassVar[str] = "error"
    kind: str
    message: str
    discard_partial: bool = False


@dataclass(frozen=True)
class Notice(BaseEvent):
    """A plain informational line for the user (e.g. "flush exhausted for this cycle")."""

    type: ClassVar[str] = "notice"
    message: str
    level: str = "info"


@dataclass(frozen=True)
class TurnFinished(BaseEvent):
    """`reason`: completed, empty (the model answered nothing), tool_limit, error, cancelled."""

    type: ClassVar[str] = "turn_finished"
    turn: int
    reason: str


# --- bootstrap and workspace ---------------------------------------------------------------


@dataclass(frozen=True)
class BootstrapTruncated(BaseEvent):
    """A bootstrap file did not fit its budget; the model saw head + tail with a marker."""

    type: ClassVar[str] = "bootstrap_truncated"
    file: str
    original_chars: int
    kept_chars: int
    reason: str  # "per_file" or "total"


@dataclass(frozen=True)
class BootstrapMissing(BaseEvent):
    type: ClassVar[str] = "bootstrap_missing"
    file: str


# --- memory writes -------------------------------------------------------------------------


@dataclass(frozen=True)
class MemoryWritten(BaseEvent):
    """A memory file was written through the one door; `commit` is the git sha (None if the
    commit failed, in which case `commit_error` says why and the file is still written)."""

    type: ClassVar[str] = "memory_written"
    path: str
    bytes: int
    commit: str | None
    reason: str  # tool, flush, dream, user
    lines_added: int = 0
    lines_skipped: int = 0
    commit_error: str | None = None
    outside_edit: bool = False
    """An append found an edit made outside Cairn (an editor's save) since Cairn last wrote or
    read the file: the edit was kept, and is committed with this write."""


@dataclass(frozen=True)
class SecretsRedacted(BaseEvent):
    """Credentials in a memory write were replaced by `[REDACTED <kind>]` before the file was
    written and committed. The values themselves are never in an event."""

    type: ClassVar[str] = "secrets_redacted"
    path: str
    kinds: list[str]


@dataclass(frozen=True)
class GitLockCleared(BaseEvent):
    """Stale git lock files (a killed git left them) were removed; `path` lists them."""

    type: ClassVar[str] = "git_lock_cleared"
    path: str
    age_s: float


# --- recall --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SearchPerformed(BaseEvent):
    """One memory_search: `hits` are dicts with path, start_line, end_line, score,
    vector_score, text_score, citation, date, in_time_frame. `mode`: hybrid, keyword-only,
    vector-only. `time_frame`: the time the query named ("last week: 2026-11-23 to …")."""

    type: ClassVar[str] = "search_performed"
    query: str
    mode: str
    hits: list[dict[str, Any]]
    timings_ms: dict[str, float] = field(default_factory=dict)
    degraded_reason: str | None = None
    nothing_relevant: bool = False
    time_frame: str | None = None


@dataclass(frozen=True)
class IndexSyncProgress(BaseEvent):
    type: ClassVar[str] = "index_sync_progress"
    files_done: int
    files_total: int
    chunks: int
    embedded: int


@dataclass(frozen=True)
class IndexSynced(BaseEvent):
    type: ClassVar[str] = "index_synced"
    files_changed: int
    files_removed: int
    chunks_total: int
    embedded: int
    duration_ms: float
    trigger: str  # session_start, search, watch, manual


@dataclass(frozen=True)
class IndexRebuilt(BaseEvent):
    """The index was rebuilt from the files (missing, corrupt, or identity changed)."""

    type: ClassVar[str] = "index_rebuilt"
    reason: str


# --- the memory lifecycle ------------------------------------------------------------------


@dataclass(frozen=True)
class FlushGateEvaluated(BaseEvent):
    """The flush gate's decision with every condition: dicts of name, ok, value, threshold,
    detail. Emitted before every model call, including the ones that say no."""

    type: ClassVar[str] = "flush_gate_evaluated"
    flush: bool
    summary: str
    conditions: list[dict[str, Any]]
    projected_tokens: int
    flush_threshold: int
    compaction_threshold: int


@dataclass(frozen=True)
class FlushStarted(BaseEvent):
    type: ClassVar[str] = "flush_started"
    target: str
    cycle: int
    trigger: str  # tokens, transcript_size, manual


@dataclass(frozen=True)
class FlushFinished(BaseEvent):
    """`outcome`: written, no_reply, ignored (the model answered without the tool or NO_REPLY),
    failed, exhausted (the cycle's failures, ignored ones included, reached the limit)."""

    type: ClassVar[str] = "flush_finished"
    outcome: str
    target: str
    cycle: int
    lines: int = 0
    commit: str | None = None
    error: str | None = None
    failures: int = 0


@dataclass(frozen=True)
class CompactionSkipped(BaseEvent):
    type: ClassVar[str] = "compaction_skipped"
    reason: str


@dataclass(frozen=True)
class CompactionStarted(BaseEvent):
    """`trigger`: threshold, overflow, manual."""

    type: ClassVar[str] = "compaction_started"
    trigger: str
    tokens_before: int
    focus: str | None = None


@dataclass(frozen=True)
class CompactionFinished(BaseEvent):
    """The compaction receipt."""

    type: ClassVar[str] = "compaction_finished"
    trigger: str
    tokens_before: int
    tokens_after: int
    turns_summarised: int
    messages_kept: int
    duration_ms: float
    summary: str
    compaction_count: int
    attempts: int = 1
    fallback: str | None = None
    """Why the summary is by rule (the model's failed its check, or the model failed), or None
    when the model's summary passed."""


@dataclass(frozen=True)
class CompactionFailed(BaseEvent):
    """Compaction gave up; history was kept as it was."""

    type: ClassVar[str] = "compaction_failed"
    trigger: str
    reason: str
    attempts: int


@dataclass(frozen=True)
class ContextReport(BaseEvent):
    """`/context`: what the next prompt holds, how it was counted, and what was left out.

    `prompt_tokens` is calibrated by the provider's last report when `calibrated` (see
    `UsageUpdated`); `bootstrap_cut` maps each bootstrap file cut to fit its budget to its
    full size in characters (the rest is readable with memory_get).
    """

    type: ClassVar[str] = "context_report"
    window: int
    window_source: str
    prompt_tokens: int
    counted_prompt_tokens: int
    reported_prompt_tokens: int
    calibrated: bool
    flush_threshold: int
    compaction_threshold: int
    breakdown: dict[str, int]
    messages: int
    compactions: int
    compact_tools: bool
    bootstrap_file_budget: int
    """Characters per bootstrap file, sized to the window; `bootstrap_total_budget` for all."""
    bootstrap_total_budget: int
    bootstrap_chars: dict[str, int]
    bootstrap_cut: dict[str, int]


@dataclass(frozen=True)
class TurnsDropped(BaseEvent):
    """Even after flush and compaction the prompt would exceed the window by our count: the
    oldest `turns` whole turns left the context (they stay in the session's transcript).
    `flushed`: the flush ran in this cycle, so what mattered in them is in today's note."""

    type: ClassVar[str] = "turns_dropped"
    turns: int
    messages: int
    tokens_before: int
    tokens_after: int
    window: int
    flushed: bool


@dataclass(frozen=True)
class ContextReinjected(BaseEvent):
    """After a compaction, these AGENTS.md sections went back into the system prompt."""

    type: ClassVar[str] = "context_reinjected"
    sections: list[str]
    chars: int
    text: str


@dataclass(frozen=True)
class StartupPreludeInjected(BaseEvent):
    """A new session's first call got recent daily notes as untrusted background."""

    type: ClassVar[str] = "startup_prelude_injected"
    files: list[str]
    chars: int


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
    "limit",
]
"""Why a recalled unit was not proposed: not a daily note (MEMORY.md itself), its source
changed or went, junk (`JunkKind`), its recalls all older than the age limit, too few recalls,
too few distinct queries, a score under the gate, already in MEMORY.md or proposed, rejected
before, or past the sweep's limit."""
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


@dataclass(frozen=True)
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


@dataclass(frozen=True)
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


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class Reinforced:
    """A fact of the light phase's notes, and how often it was restated and recalled."""

    text: str
    citation: str
    restated: int
    recalled: int


@dataclass(frozen=True)
class Theme:
    """A word that recurs in the REM phase's notes, and on how many days."""

    word: str
    mentions: int
    days: int


@dataclass(frozen=True)
class CandidateTruth:
    text: str
    citation: str
    confidence: float


@dataclass(frozen=True)
class Stopped:
    """How many recalled units one reason kept from being proposed."""

    reason: StopReason
    count: int
    junk: JunkKind | None = None


@dataclass(frozen=True)
class DreamSweepStarted(BaseEvent):
    type: ClassVar[str] = "dream_sweep_started"
    sweep_id: str
    trigger: DreamTrigger


@dataclass(frozen=True)
class LightSleepFinished(BaseEvent):
    """The light phase: the last days' notes, near-duplicates merged, reinforcement counted."""

    type: ClassVar[str] = "light_sleep_finished"
    since: str
    until: str
    notes: int
    units: int
    merged: int
    reinforced: list[Reinforced]


@dataclass(frozen=True)
class RemSleepFinished(BaseEvent):
    """The REM phase: a week of notes, recurring themes and candidate truths."""

    type: ClassVar[str] = "rem_sleep_finished"
    since: str
    until: str
    notes: int
    themes: list[Theme]
    truths: list[CandidateTruth]


@dataclass(frozen=True)
class DeepSleepFinished(BaseEvent):
    """The deep phase: recalled units ranked and gated; what stopped the rest."""

    type: ClassVar[str] = "deep_sleep_finished"
    ranked: int
    passed: int
    stopped: list[Stopped]
    updates: int
    by_model: int
    by_rule: int


@dataclass(frozen=True)
class DreamProposed(BaseEvent):
    type: ClassVar[str] = "dream_proposed"
    proposal: Proposal


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class DreamSweepSkipped(BaseEvent):
    """No sweep ran: dreaming is off, another process is sweeping, or the sweep failed (and
    left every file as it was)."""

    type: ClassVar[str] = "dream_sweep_skipped"
    reason: Literal["disabled", "busy", "failed"]
    detail: str


@dataclass(frozen=True)
class ProposalsWaiting(BaseEvent):
    """At the start of a session: how many of dreaming's proposals wait for review."""

    type: ClassVar[str] = "proposals_waiting"
    count: int


@dataclass(frozen=True)
class MemoryBudget:
    """MEMORY.md's size against its share of the bootstrap at the current window."""

    chars: int
    budget: int
    window: int

    @property
    def over(self) -> bool:
        return self.chars > self.budget


@dataclass(frozen=True)
class ProposalAccepted(BaseEvent):
    """A person accepted a proposal: `text` went into MEMORY.md in commit `commit`."""

    type: ClassVar[str] = "proposal_accepted"
    proposal: Proposal
    text: str
    edited: bool
    commit: str | None
    open: int
    budget: MemoryBudget


@dataclass(frozen=True)
class ProposalRejected(BaseEvent):
    """A person rejected a proposal; it is remembered by content and does not come back."""

    type: ClassVar[str] = "proposal_rejected"
    proposal: Proposal
    commit: str | None
    open: int


Event = (
    SessionStarted
    | TurnStarted
    | TextDelta
    | AssistantMessage
    | ToolCallStarted
    | ToolCallFinished
    | UsageUpdated
    | Loading
    | ModelRetry
    | Error
    | Notice
    | TurnFinished
    | BootstrapTruncated
    | BootstrapMissing
    | MemoryWritten
    | SecretsRedacted
    | GitLockCleared
    | SearchPerformed
    | IndexSyncProgress
    | IndexSynced
    | IndexRebuilt
    | FlushGateEvaluated
    | FlushStarted
    | FlushFinished
    | CompactionSkipped
    | CompactionStarted
    | CompactionFinished
    | CompactionFailed
    | TurnsDropped
    | ContextReport
    | ContextReinjected
    | StartupPreludeInjected
    | DreamSweepStarted
    | LightSleepFinished
    | RemSleepFinished
    | DeepSleepFinished
    | DreamProposed
    | DreamSweepFinished
    | DreamSweepSkipped
    | ProposalsWaiting
    | ProposalAccepted
    | ProposalRejected
)

EVENT_TYPES: dict[str, type[BaseEvent]] = {cls.type: cls for cls in BaseEvent.__subclasses__()}
EVENT_CLASSES: tuple[type[BaseEvent], ...] = typing.get_args(Event)


def as_event(event: BaseEvent) -> Event:
    """`event` as the `Event` union the consumers match on exhaustively.

    Raises:
        TypeError: its class is not in the union (a new event must be added to it).
    """
    if not isinstance(event, EVENT_CLASSES):
        raise TypeError(f"{type(event).__name__} is not in shell.events.Event")
    return typing.cast(Event, event)


def to_dict(event: BaseEvent) -> dict[str, Any]:
    return {"type": event.type, **dataclasses.asdict(event)}


def to_json(event: BaseEvent) -> str:
    return json.dumps(to_dict(event), ensure_ascii=False, default=str)


def from_dict(data: dict[str, Any]) -> Event:
    """The event `data` describes, nested dataclasses and all.

    Raises:
        ValueError: an unknown type, or a value outside its `Literal`.
        TypeError: a missing or unknown field.
    """
    fields = dict(data)
    cls = EVENT_TYPES.get(fields.pop("type", ""))
    if cls is None:
        raise ValueError(f"unknown event type: {data.get('type')!r}")
    return as_event(decode(cls, fields))


def decode(hint: Any, value: Any) -> Any:
    """`value` (as `json.loads` gives it) made into `hint`: dataclasses, lists, dicts,
    optionals and literals; anything else is taken as it is."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if dataclasses.is_dataclass(hint) and isinstance(hint, type) and isinstance(value, dict):
        hints = _hints(hint)
        return hint(**{name: decode(hints.get(name, Any), item) for name, item in value.items()})
    if origin is list and isinstance(value, list):
        return [decode(args[0], item) for item in value]
    if origin is dict and isinstance(value, dict):
        return {key: decode(args[1], item) for key, item in value.items()}
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        return decode(next(a for a in args if a is not type(None)), value)
    if origin is Literal and value not in args:
        raise ValueError(f"{value!r} is not one of {', '.join(map(repr, args))}")
    return value


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def from_json(line: str) -> Event:
    return from_dict(json.loads(line))

"""The memory lifecycle: the flush gate, flushes, compaction, the context."""

from __future__ import annotations

from typing import ClassVar, Literal

from shell.events.base import BaseEvent, frozen
from shell.events.turns import UsageUpdated

FlushTrigger = Literal["tokens", "transcript_size", "manual", "overflow", "new_session"]
GateOccasion = Literal["model_call", "compaction", "new_session"]
"""What the flush gate was asked before: the next model call, a compaction, or `/new` (which
discards the context as a compaction does)."""
FlushEnding = Literal["written", "no_reply", "ignored", "failed", "exhausted"]
"""written; no_reply (nothing to store); ignored (the model answered without the tool or
NO_REPLY); failed; exhausted (the cycle's failures, ignored ones included, reached the
limit)."""
CompactionTrigger = Literal["threshold", "overflow", "manual"]
GateConditionName = Literal[
    "enabled",
    "tokens",
    "transcript_size",
    "not_flushed_this_cycle",
    "workspace_writable",
    "failures",
]
GATE_REQUIRED: tuple[GateConditionName, ...] = (
    "enabled",
    "not_flushed_this_cycle",
    "workspace_writable",
    "failures",
)
"""The conditions that must all hold for a flush (one of "tokens" and "transcript_size"
triggers it), in the order a refusal names the first that failed."""
GATE_HELD_BACK: dict[GateConditionName, str] = {
    "enabled": "flush is off",
    "not_flushed_this_cycle": "already flushed",
    "workspace_writable": "read-only",
    "failures": "gave up this cycle",
}
"""A required condition that failed, in the few words a one-line view has for it."""


@frozen
class GateCondition:
    """One condition of the flush gate with the numbers it was decided on."""

    name: GateConditionName
    ok: bool
    value: int | None
    """Tokens, bytes, a count or a flag (True is 1); None when the record has none."""
    threshold: int | None
    """What `value` is held against; None when nothing is (a size trigger switched off)."""
    detail: str


# --- the memory lifecycle ------------------------------------------------------------------


@frozen
class FlushGateEvaluated(BaseEvent):
    """The flush gate's decision with every condition. Emitted before every model call,
    including the ones that say no."""

    type: ClassVar[str] = "flush_gate_evaluated"
    flush: bool
    summary: str
    conditions: list[GateCondition]
    projected_tokens: int
    flush_threshold: int
    compaction_threshold: int
    before: GateOccasion = "model_call"


@frozen
class FlushStarted(BaseEvent):
    type: ClassVar[str] = "flush_started"
    target: str
    cycle: int
    trigger: FlushTrigger


@frozen
class FlushFinished(BaseEvent):
    type: ClassVar[str] = "flush_finished"
    outcome: FlushEnding
    target: str
    cycle: int
    lines: int = 0
    commit: str | None = None
    error: str | None = None
    failures: int = 0
    by_rule: bool = False
    """The model stored nothing and Cairn kept what the user told, by rule (`memory_assist`)."""


@frozen
class CompactionSkipped(BaseEvent):
    type: ClassVar[str] = "compaction_skipped"
    reason: str


@frozen
class CompactionStarted(BaseEvent):
    type: ClassVar[str] = "compaction_started"
    trigger: CompactionTrigger
    tokens_before: int
    focus: str | None = None


@frozen
class CompactionFinished(BaseEvent):
    """The compaction receipt."""

    type: ClassVar[str] = "compaction_finished"
    trigger: CompactionTrigger
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


@frozen
class CompactionFailed(BaseEvent):
    """Compaction gave up; history was kept as it was."""

    type: ClassVar[str] = "compaction_failed"
    trigger: CompactionTrigger
    reason: str
    attempts: int


@frozen
class ContextReport(BaseEvent):
    """`/context`: what the next prompt holds (`usage`, the meter's own figures), and what the
    bootstrap left out. `bootstrap_cut` maps each bootstrap file cut to fit its budget to its
    full size in characters (the rest is readable with memory_get)."""

    type: ClassVar[str] = "context_report"
    usage: UsageUpdated
    messages: int
    compactions: int
    compact_tools: bool
    bootstrap_file_budget: int
    """Characters per bootstrap file, sized to the window; `bootstrap_total_budget` for all."""
    bootstrap_total_budget: int
    bootstrap_chars: dict[str, int]
    bootstrap_cut: dict[str, int]


@frozen
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


@frozen
class ContextReinjected(BaseEvent):
    """After a compaction, these AGENTS.md sections went back into the system prompt."""

    type: ClassVar[str] = "context_reinjected"
    sections: list[str]
    chars: int
    text: str


@frozen
class StartupPreludeInjected(BaseEvent):
    """A new session's first call got recent daily notes as untrusted background."""

    type: ClassVar[str] = "startup_prelude_injected"
    files: list[str]
    chars: int

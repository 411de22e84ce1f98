"""Turns and the model, the bootstrap and the workspace."""

from __future__ import annotations

from dataclasses import field
from typing import Any, ClassVar, Literal

from shell.events.base import BaseEvent, frozen

WindowSource = Literal["config", "demo", "model_info", "assumed"]
"""Where the context window came from: the settings, the demo brain, litellm's model info, or
assumed (128k) for a model nobody knows."""
ErrorKind = Literal[
    "auth",
    "bad_request",
    "context_overflow",
    "not_found",
    "unavailable",
    "timeout",
    "rate_limited",
    "index",
    "crash",
    "background",
    "dream",
    "command",
    "storage",
]
"""A model call's failure (the first seven, `shell.model.ModelError`), a broken index, a bug in
the core (crash), in a background stream, a decision dreaming could not carry out, a slash
command that does not exist (`shell.commands`), or a disk that took no write (storage: full,
read-only, failing)."""
NoticeLevel = Literal["info", "warning", "error"]
TurnEnding = Literal["completed", "empty", "tool_limit", "error", "cancelled"]

# --- turns and the model -------------------------------------------------------------------


@frozen
class SessionStarted(BaseEvent):
    """A session is ready: new, or resumed from `.cairn/sessions`."""

    type: ClassVar[str] = "session_started"
    session_id: str
    resumed: bool
    model: str
    workspace: str
    demo: bool = False


@frozen
class TurnStarted(BaseEvent):
    type: ClassVar[str] = "turn_started"
    session_id: str
    turn: int
    prompt: str


@frozen
class TextDelta(BaseEvent):
    """A piece of streamed assistant text."""

    type: ClassVar[str] = "text_delta"
    text: str


@frozen
class AssistantMessage(BaseEvent):
    """The assistant's complete text for one model call (after streaming)."""

    type: ClassVar[str] = "assistant_message"
    text: str


@frozen
class ToolCallStarted(BaseEvent):
    type: ClassVar[str] = "tool_call_started"
    call_id: str
    name: str
    arguments: dict[str, Any]
    from_text: bool = False
    """The model wrote the call in its text, not as a tool call (`shell.model.textcalls`)."""
    by_cairn: bool = False
    """Cairn made the call for the model (`shell.loop.assist`)."""


@frozen
class TextCallsRead(BaseEvent):
    """The model wrote tool calls in its reply's text (`shell.model.textcalls`): they run as
    the tool calls that follow, and the text streamed so far is void; the prose before the
    calls, if any, comes as the `AssistantMessage`."""

    type: ClassVar[str] = "text_calls_read"
    names: list[str]
    prose: str
    dropped_chars: int = 0
    """The text after the calls, not kept: written before any result came back."""


@frozen
class ToolCallFinished(BaseEvent):
    type: ClassVar[str] = "tool_call_finished"
    call_id: str
    name: str
    result: str
    error: str | None = None
    duration_ms: float = 0.0


@frozen
class UsageUpdated(BaseEvent):
    """How full the context is, from the one ContextBudget.

    `prompt_tokens` is the next prompt as the provider will count it: projected by what it
    reported for this model (`calibrated`, `shell.context.calibration`), else our own count.
    `counted_prompt_tokens` is our own count; `reported_prompt_tokens` what the provider said
    for this session's last call (0 when it said nothing yet). `cycle_flushed`: whether this
    compaction cycle's flush is settled (it wrote, had nothing to write, or gave up after its
    failures: `FlushCycle.flushed`), so the next threshold ahead is the compaction's; a failed
    flush leaves it false, as the core will flush again.
    """

    type: ClassVar[str] = "usage_updated"
    prompt_tokens: int
    window: int
    flush_threshold: int
    compaction_threshold: int
    breakdown: dict[str, int] = field(default_factory=dict)
    reported_prompt_tokens: int = 0
    completion_tokens: int = 0
    window_source: WindowSource = "config"
    counted_prompt_tokens: int = 0
    calibrated: bool = False
    cycle_flushed: bool = False


@frozen
class Loading(BaseEvent):
    """Something the session needs is still loading (`done` false), or has loaded (`done` true):
    said by the start while it loads in the background, and by a model call that has to wait.

    `what`: "model" (the model client's libraries, imported in the background from start-up).
    """

    type: ClassVar[str] = "loading"
    what: Literal["model"]
    done: bool


@frozen
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


@frozen
class Error(BaseEvent):
    """Something went wrong; `kind` is a short stable name (auth, bad_request, overflow, …).

    `discard_partial` means the text streamed by the failed model call is void, as after a
    `ModelRetry`: it was never stored, and must not read as an answer.
    """

    type: ClassVar[str] = "error"
    kind: ErrorKind
    message: str
    discard_partial: bool = False


@frozen
class Notice(BaseEvent):
    """A plain informational line for the user (e.g. "flush exhausted for this cycle")."""

    type: ClassVar[str] = "notice"
    message: str
    level: NoticeLevel = "info"


@frozen
class AnswerSourced(BaseEvent):
    """The answer restates a memory line a search showed this session without citing it: Cairn
    names that line's citation beside the answer (checked: it is a hit, not the model's word)."""

    type: ClassVar[str] = "answer_sourced"
    citation: str
    snippet: str
    """The line of the hit the answer restates."""


@frozen
class ToolCallStopped(BaseEvent):
    """A tool call the model asked for that never ran: the turn was cancelled before it began.
    It ends the call's card instead of a `ToolCallFinished` (a call already running when the
    cancel came runs to its end and gets its `ToolCallFinished`)."""

    type: ClassVar[str] = "tool_call_stopped"
    call_id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@frozen
class TurnCancelled(BaseEvent):
    """The receipt of a turn the user cancelled, just before its `TurnFinished("cancelled")`:
    what had happened before it stopped.

    `stopped_during`: what was under way when the cancel came ("model_call": the model's answer
    was cut and not kept; "tool_calls": the running tool finished, the rest did not run;
    "memory_lifecycle": a flush or compaction finished first). `tools_finished` and
    `tools_stopped` name the calls of this turn (in order); `written` the memory files written
    and `commits` their commits.
    """

    type: ClassVar[str] = "turn_cancelled"
    turn: int
    stopped_during: Literal["model_call", "tool_calls", "memory_lifecycle"]
    tools_finished: list[str] = field(default_factory=list)
    tools_stopped: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)


@frozen
class CommandHelp:
    """One slash command as `/help` lists it (see `shell.commands.Command`)."""

    name: str
    args: str
    help: str
    key: str | None = None
    tui_only: bool = False


@frozen
class HelpShown(BaseEvent):
    """`/help`: every slash command, with its arguments, what it does and its key in the TUI."""

    type: ClassVar[str] = "help_shown"
    commands: list[CommandHelp]


@frozen
class TurnFinished(BaseEvent):
    """`reason`: completed, empty (the model answered nothing), tool_limit, error, cancelled."""

    type: ClassVar[str] = "turn_finished"
    turn: int
    reason: TurnEnding


# --- bootstrap and workspace ---------------------------------------------------------------


@frozen
class BootstrapTruncated(BaseEvent):
    """A bootstrap file did not fit its budget; the model saw head + tail with a marker."""

    type: ClassVar[str] = "bootstrap_truncated"
    file: str
    original_chars: int
    kept_chars: int
    reason: Literal["per_file", "total"]


@frozen
class BootstrapMissing(BaseEvent):
    type: ClassVar[str] = "bootstrap_missing"
    file: str

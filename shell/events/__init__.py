"""The event vocabulary: every fact the core reports, as a frozen dataclass.

Events are past-tense facts. Each has a snake_case `type` name, and round-trips through JSON
with `to_json` / `from_json`, so the headless CLI, traces, replay and the TUI all speak the same
language. New events go in the module of their concern (`turns`, `memory`, `lifecycle`,
`dreaming`, `tools`, `sync`) and into the `Event` union here, and nowhere else.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from typing import Any

from shell.events.base import BaseEvent
from shell.events.decoding import decode
from shell.events.dreaming import (
    CandidateTruth,
    DeepSleepFinished,
    DistilledBy,
    DreamProposed,
    DreamSweepFinished,
    DreamSweepSkipped,
    DreamSweepStarted,
    DreamTrigger,
    JunkKind,
    LightSleepFinished,
    MemoryBudget,
    Proposal,
    ProposalAccepted,
    ProposalKind,
    ProposalRejected,
    ProposalsWaiting,
    Reinforced,
    RemSleepFinished,
    Signals,
    SourceOrigin,
    SourceRef,
    Stopped,
    StopReason,
    Theme,
)
from shell.events.lifecycle import (
    GATE_HELD_BACK,
    GATE_REQUIRED,
    CompactionFailed,
    CompactionFinished,
    CompactionSkipped,
    CompactionStarted,
    CompactionTrigger,
    ContextReinjected,
    ContextReport,
    FlushEnding,
    FlushFinished,
    FlushGateEvaluated,
    FlushStarted,
    FlushTrigger,
    GateCondition,
    GateConditionName,
    GateOccasion,
    StartupPreludeInjected,
    TurnsDropped,
)
from shell.events.memory import (
    CappedFile,
    CitationCheck,
    CitationMark,
    GitLockCleared,
    IndexRebuilt,
    IndexSynced,
    IndexSyncProgress,
    MemoryForgotten,
    MemoryWritten,
    SearchHit,
    SearchMode,
    SearchPerformed,
    SecretsRedacted,
    SyncTrigger,
    WriteReason,
    WriteState,
)
from shell.events.sync import (
    FailureKind,
    SyncCloned,
    SyncConflict,
    SyncEvent,
    SyncFailed,
    SyncFinished,
    SyncForgotten,
    SyncRecovered,
    SyncRedacted,
    SyncRedactionPreviewed,
    SyncRemoteAdded,
    SyncResolved,
    SyncStatusChanged,
    Take,
)
from shell.events.tools import (
    ApprovalChoice,
    ApprovalDecided,
    ApprovalRequested,
    CommandEnding,
    CommandFinished,
    CommandOutput,
    DecidedBy,
    FileEdited,
    McpCallServed,
    McpServerChanged,
    McpServerInfo,
    McpState,
    McpTransport,
    ToolInfo,
    ToolRisk,
    ToolsListed,
)
from shell.events.turns import (
    AnswerSourced,
    AssistantMessage,
    BootstrapMissing,
    BootstrapTruncated,
    CommandHelp,
    Error,
    ErrorKind,
    HelpShown,
    Loading,
    ModelRetry,
    Notice,
    NoticeLevel,
    SessionStarted,
    TextCallsRead,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolCallStopped,
    TurnCancelled,
    TurnEnding,
    TurnFinished,
    TurnStarted,
    UsageUpdated,
    WindowSource,
)

__all__ = [
    "EVENT_CLASSES",
    "EVENT_TYPES",
    "GATE_HELD_BACK",
    "GATE_REQUIRED",
    "AnswerSourced",
    "ApprovalChoice",
    "ApprovalDecided",
    "ApprovalRequested",
    "AssistantMessage",
    "BaseEvent",
    "BootstrapMissing",
    "BootstrapTruncated",
    "CandidateTruth",
    "CappedFile",
    "CitationCheck",
    "CitationMark",
    "CommandEnding",
    "CommandFinished",
    "CommandHelp",
    "CommandOutput",
    "CompactionFailed",
    "CompactionFinished",
    "CompactionSkipped",
    "CompactionStarted",
    "CompactionTrigger",
    "ContextReinjected",
    "ContextReport",
    "DecidedBy",
    "DeepSleepFinished",
    "DistilledBy",
    "DreamProposed",
    "DreamSweepFinished",
    "DreamSweepSkipped",
    "DreamSweepStarted",
    "DreamTrigger",
    "Error",
    "ErrorKind",
    "Event",
    "FailureKind",
    "FileEdited",
    "FlushEnding",
    "FlushFinished",
    "FlushGateEvaluated",
    "FlushStarted",
    "FlushTrigger",
    "GateCondition",
    "GateConditionName",
    "GateOccasion",
    "GitLockCleared",
    "HelpShown",
    "IndexRebuilt",
    "IndexSyncProgress",
    "IndexSynced",
    "JunkKind",
    "LightSleepFinished",
    "Loading",
    "McpCallServed",
    "McpServerChanged",
    "McpServerInfo",
    "McpState",
    "McpTransport",
    "MemoryBudget",
    "MemoryForgotten",
    "MemoryWritten",
    "ModelRetry",
    "Notice",
    "NoticeLevel",
    "Proposal",
    "ProposalAccepted",
    "ProposalKind",
    "ProposalRejected",
    "ProposalsWaiting",
    "Reinforced",
    "RemSleepFinished",
    "SearchHit",
    "SearchMode",
    "SearchPerformed",
    "SecretsRedacted",
    "SessionStarted",
    "Signals",
    "SourceOrigin",
    "SourceRef",
    "StartupPreludeInjected",
    "StopReason",
    "Stopped",
    "SyncCloned",
    "SyncConflict",
    "SyncFailed",
    "SyncFinished",
    "SyncForgotten",
    "SyncRecovered",
    "SyncRedacted",
    "SyncRedactionPreviewed",
    "SyncRemoteAdded",
    "SyncResolved",
    "SyncStatusChanged",
    "SyncTrigger",
    "Take",
    "TextCallsRead",
    "TextDelta",
    "Theme",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolCallStopped",
    "ToolInfo",
    "ToolRisk",
    "ToolsListed",
    "TurnCancelled",
    "TurnEnding",
    "TurnFinished",
    "TurnStarted",
    "TurnsDropped",
    "UsageUpdated",
    "WindowSource",
    "WriteReason",
    "WriteState",
    "as_event",
    "decode",
    "from_dict",
    "from_json",
    "to_dict",
    "to_json",
]

Event = (
    SessionStarted
    | TurnStarted
    | TextDelta
    | AssistantMessage
    | TextCallsRead
    | ToolCallStarted
    | ToolCallFinished
    | ToolCallStopped
    | TurnCancelled
    | HelpShown
    | UsageUpdated
    | Loading
    | ModelRetry
    | Error
    | Notice
    | AnswerSourced
    | TurnFinished
    | BootstrapTruncated
    | BootstrapMissing
    | MemoryWritten
    | MemoryForgotten
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
    | ApprovalRequested
    | ApprovalDecided
    | CommandOutput
    | CommandFinished
    | FileEdited
    | McpServerChanged
    | McpCallServed
    | ToolsListed
    | SyncEvent
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


def from_json(line: str) -> Event:
    return from_dict(json.loads(line))

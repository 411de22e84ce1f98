"""Project tools, approvals and MCP servers: what the agent did outside its memory."""

from __future__ import annotations

from dataclasses import field
from typing import ClassVar, Literal

from shell.events.base import BaseEvent, frozen

ToolRisk = Literal["read", "memory", "write", "execute"]
"""What a call may do: read, or write memory (both run freely: memory writes are committed and
can be reverted), write project files, or execute (run a command, call an MCP server's tool);
write and execute ask first (`shell.tools.approvals`)."""
ApprovalChoice = Literal["allow_once", "allow_session", "deny"]
DecidedBy = Literal["user", "rule", "session", "yes", "headless", "cancel"]
"""Who decided: the user in the TUI; an allow rule of the config; an earlier "allow for this
session"; `--yes`; the headless policy (no one to ask: denied); a cancel while it waited."""
CommandEnding = Literal["exited", "timeout", "cancelled", "failed"]
McpTransport = Literal["stdio", "http"]
McpState = Literal["starting", "ready", "failed", "stopped"]


@frozen
class ApprovalRequested(BaseEvent):
    """A call that writes or executes waits for the user: the TUI shows a modal with what it
    will do. Answered by `Agent.answer_approval(call_id, …)`; followed by `ApprovalDecided`.

    `command`: the command line of a `run_command`; `diff`: the unified diff an edit would
    make; `detail`: anything else worth seeing (an MCP tool's arguments as JSON).
    `session_scope`: what "allow for this session" would allow, in words ("run_command
    `pytest -q`", "write_file to `src/app.py`", "every time__get_current_time").
    """

    type: ClassVar[str] = "approval_requested"
    call_id: str
    tool: str
    risk: ToolRisk
    summary: str
    session_scope: str
    command: str | None = None
    diff: str | None = None
    detail: str | None = None


@frozen
class ApprovalDecided(BaseEvent):
    """How a call that writes or executes was decided, and by whom. `reason`: what the model
    is told when it is denied (the user's words, or the policy's), or what allowed it (the
    rule)."""

    type: ClassVar[str] = "approval_decided"
    call_id: str
    tool: str
    allowed: bool
    by: DecidedBy
    choice: ApprovalChoice
    reason: str = ""


@frozen
class CommandOutput(BaseEvent):
    """A piece of a running command's output (stdout and stderr as they came), for its card.
    The core bounds how much it sends: a command that prints megabytes is sampled, not
    streamed whole."""

    type: ClassVar[str] = "command_output"
    call_id: str
    text: str


@frozen
class CommandFinished(BaseEvent):
    """A `run_command` ended, just before its `ToolCallFinished`.

    `ended`: exited by itself, killed at its timeout, killed by a cancel (esc), or never
    started (`failed`, with the reason in `detail`). `output_ref`: where the whole output is
    kept for the model to read on (`read_output(ref="output:<call id>")`), when the result cut it.
    """

    type: ClassVar[str] = "command_finished"
    call_id: str
    command: str
    exit_code: int | None
    ended: CommandEnding
    output_bytes: int
    duration_ms: float
    output_ref: str | None = None
    detail: str = ""


@frozen
class FileEdited(BaseEvent):
    """A project file changed by `edit_file` or `write_file`. `diff`: unified, bounded."""

    type: ClassVar[str] = "file_edited"
    call_id: str
    path: str
    diff: str
    added: int
    removed: int
    created: bool = False


@frozen
class McpServerInfo:
    """One configured MCP server as it stands."""

    name: str
    transport: McpTransport
    state: McpState
    tools: list[str] = field(default_factory=list)
    detail: str = ""


@frozen
class McpServerChanged(BaseEvent):
    """An MCP server started, failed to start, or stopped (died mid-session, or at the end).
    A failure is one notice in the TUI, never a crash: `server.detail` says why."""

    type: ClassVar[str] = "mcp_server_changed"
    server: McpServerInfo


@frozen
class ToolInfo:
    """One tool the model may call, as `/tools` lists it. `source`: "memory", "project" or
    "mcp:<server>"; `approval`: how a call is decided now ("free" for reads, "ask", or
    "allowed" by a rule, `--yes` or this session)."""

    name: str
    source: str
    risk: ToolRisk
    approval: Literal["free", "ask", "allowed"]
    description: str


@frozen
class ToolsListed(BaseEvent):
    """`/tools`: every tool the model may call, and the MCP servers. `sandbox`: how commands
    run ("bubblewrap, network off", or "unsandboxed: <why>"; empty without run_command)."""

    type: ClassVar[str] = "tools_listed"
    tools: list[ToolInfo]
    servers: list[McpServerInfo] = field(default_factory=list)
    project: str = ""
    sandbox: str = ""


@frozen
class McpCallServed(BaseEvent):
    """`cairn mcp` answered a tool call of an MCP client: Cairn's memory serving another agent
    (`shell.mcp_server`). `client`: the name the client gave itself (untrusted, cleaned);
    `error`: why the call failed or was refused; None when it succeeded."""

    type: ClassVar[str] = "mcp_call_served"
    client: str
    transport: McpTransport
    tool: str
    error: str | None = None
    duration_ms: float = 0.0

"""The `[tools]` and `[mcp.<name>]` tables of the settings (`shell.config` reads them, with the
rest)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ToolSettings:
    """The project tools and their approvals (`shell.tools.approvals`): the config's `[tools]`
    table, `CAIRN_TOOLS_<NAME>`, and the flags `--yes` and `--allow`."""

    approval: str = "ask"
    """"ask": calls that write or execute ask first (headless: denied without an allow rule);
    "yes": everything runs (`--yes`)."""
    allow: tuple[str, ...] = ()
    """Allow rules: a tool name, or "tool:pattern" matched against the command line or the
    path (shell-style: "run_command:pytest*", "run_command:git status", "edit_file:docs/*");
    an MCP tool by its name ("time__*")."""
    pass_env: tuple[str, ...] = ()
    """Variables a command gets beyond the safe few (PATH, HOME, the locale…), by name."""
    network: bool = False
    """Whether a sandboxed command may reach the network."""
    sandbox: str = "auto"
    """"auto": commands run in a bubblewrap sandbox where it works; "off": never."""
    project: str = "auto"
    """Offer the project tools: "auto" (when the window is 4,096 tokens or more), "on" (the
    CLI's `--project`), "off"."""
    command_timeout: float = 120.0
    """A command's default timeout in seconds (the model may ask for up to `max_timeout`)."""
    max_timeout: float = 1800.0


@dataclass(frozen=True)
class McpServerSettings:
    """One MCP server of the config's `[mcp.<name>]` tables: `command` (and `args`, `env`,
    `cwd`) for stdio, or `url` (and `headers`) for streamable HTTP."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    call_timeout: float = 60.0
    """Seconds a tool call may take before it is abandoned with a notice."""
    startup_timeout: float = 20.0
    enabled: bool = True

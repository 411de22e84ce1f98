"""The agent's tools beyond its memory: the project folder's, the MCP servers', their approvals.

The memory tools come with the memory (`shell.memory`); the workbench adds, to the same
toolbox, the project tools (`shell.tools.project`, when a project folder is set) and the tools of
the configured MCP servers (`shell.tools.mcp`), and puts `Approvals` in front of every call that
writes or executes. It also fits each tool result to the window before it enters the transcript,
and from the first result that was cut on, offers `read_output` to read the rest: only then, so
a small window pays for its schema only once it is of use.

The project tools' schemas cost about 560 tokens even in their compact form: below
`PROJECT_TOOLS_MIN_WINDOW` they are offered only when asked for (`--project`, or
`[tools] project = "on"`), since at 2,048 tokens they would leave a weak model a quarter of its
window; the session says so once at start. The MCP servers' tools were asked for by name in
the config, so they are offered at any window, except what the window cannot hold (a schema
over an eighth of it, or past half of it with all the others: `shell.tools.mcp.offer`);
when their schemas take a quarter of it or more, the session says so once, with the figures.

Commands run in the sandbox (`shell.tools.project.sandbox`) where it works; where it does not,
the session says so at start and `/tools` shows it (`sandboxed` is the fact, for approvals).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from shell.config import Settings
from shell.context.budget import ContextWindow
from shell.context.counter import TokenCounter
from shell.context.request import COMPACT_TOOLS_BELOW
from shell.events import ApprovalChoice, CommandFinished, Event, Notice, ToolInfo, ToolsListed
from shell.text import counted
from shell.tools.approvals import Approvals
from shell.tools.fitting import fit_result, result_budget
from shell.tools.mcp import McpHub
from shell.tools.output import read_output_tool
from shell.tools.project import Sandbox, project_tools
from shell.tools.project.cairn_files import memory_folders, reserved_files
from shell.tools.project.outputs import OutputStore
from shell.tools.project.root import ProjectRoot
from shell.tools.toolbox import Tool, Toolbox, ToolResult

PROJECT_TOOLS_MIN_WINDOW = 4_096
MCP_SHARE_NOTICE = 0.25
"""The share of the window the MCP tools' schemas may take before the session says so."""


class Workbench:
    """Project tools, MCP servers and approvals, for one session's toolbox.

    Args:
        settings: The project folder, the `[tools]` policy and the `[mcp]` servers.
        toolbox: The session's toolbox (the memory tools already in it).
        interactive: Whether a person can answer approvals (the TUI); headless denies instead.
        window: The session's context window (the project tools wait until it is resolved).
    """

    def __init__(
        self,
        settings: Settings,
        toolbox: Toolbox,
        *,
        interactive: bool,
        window: ContextWindow,
    ) -> None:
        self.settings = settings
        self.toolbox = toolbox
        self.sandbox = Sandbox.for_settings(settings)
        self.approvals = Approvals(
            settings.tools, interactive=interactive, sandboxed=self.sandbox.active
        )
        toolbox.approve = self.approvals
        self.outputs = OutputStore(settings.state_dir / "outputs")
        self.window = window
        self.project: ProjectRoot | None = None
        self._project_decided = False
        self._project_notice: Notice | None = None
        """Why the project tools are not offered, said once at start."""
        if window.resolved:
            self._offer_project_tools()
        servers = [server for server in settings.mcp if server.enabled]
        self.hub = McpHub(servers, log_dir=settings.state_dir / "mcp") if servers else None

    async def start(self) -> AsyncIterator[Event]:
        """Offer the project tools (the window is resolved by now), and start the MCP servers
        (each bounded by its startup timeout) and offer theirs."""
        if not self._project_decided:
            self._offer_project_tools()
        if self._project_notice is not None:
            yield self._project_notice
        if self.toolbox.get("run_command") is not None and not self.sandboxed:
            hint = "" if self.sandbox.mode == "off" else " The README's sandbox section says how."
            yield Notice(
                f"Commands run unsandboxed ({self.sandbox.unavailable()}): they can read every "
                f"file you can, and write outside the project; no allow rule approves them.{hint}",
                level="warning",
            )
        if self.hub is None:
            return
        for event in await self.hub.start():
            yield event
        window = self.window.budget.window
        builtin = TokenCounter().tools(self.toolbox.schemas(compact=window < COMPACT_TOOLS_BELOW))
        tools, refused = self.hub.offer(window, taken=builtin)
        self.toolbox.add(tools)
        for refusal in refused:
            yield refusal
        if notice := self._mcp_share(tools):
            yield notice

    @property
    def sandboxed(self) -> bool:
        """Whether run_command runs in the sandbox (False when bwrap cannot, or is off)."""
        return self.sandbox.active

    def _mcp_share(self, tools: list[Tool]) -> Notice | None:
        """A warning when the MCP tools' schemas, as the request will send them, take
        `MCP_SHARE_NOTICE` of the window or more."""
        window = self.window.budget.window
        compact = window < COMPACT_TOOLS_BELOW
        tokens = TokenCounter().tools([tool.schema(compact=compact) for tool in tools])
        if not tools or tokens < window * MCP_SHARE_NOTICE:
            return None
        return Notice(
            f"The MCP servers' {counted(len(tools), 'tool')} take {tokens:,} tokens of the "
            f"{window:,}-token window ({tokens / window:.0%}) before any message. To give the "
            "model room, set enabled = false in the [mcp.<name>] table of a server it can do "
            "without.",
            level="warning",
        )

    def _offer_project_tools(self) -> None:
        self._project_decided = True
        folder, wanted = self.settings.project, self.settings.tools.project
        if folder is None or wanted == "off":
            return
        window = self.window.budget.window
        if wanted == "auto" and window < PROJECT_TOOLS_MIN_WINDOW:
            self._project_notice = Notice(
                f"Project tools are off: at a {window:,}-token window their schemas would take "
                'a quarter of it. --project DIR (or [tools] project = "on") offers them anyway.'
            )
            return
        self.project = ProjectRoot(
            folder,
            protected=memory_folders(self.settings),
            reserved=reserved_files(self.settings),
        )
        tools = project_tools(self.project, self.outputs, self.settings.tools, self.sandbox)
        self.toolbox.add(tools)

    def drain(self) -> list[Event]:
        """MCP servers that stopped since the last drain (a death or a timeout met by a call
        is in that call's result instead); a stopped server's tools are no longer offered."""
        if self.hub is None:
            return []
        changes: list[Event] = [*self.hub.drain()]
        for server in self.hub.servers():
            if server.state != "ready":
                self.toolbox.remove(f"mcp:{server.name}")
        return changes

    def fit(self, call_id: str, result: ToolResult) -> ToolResult:
        """`result` cut to its share of the window, the whole text kept to read on (with
        read_output offered from then on)."""
        fitted = fit_result(result, call_id, self.outputs, self._result_budget())
        command_cut = any(isinstance(e, CommandFinished) and e.output_ref for e in result.events)
        if (fitted is not result or command_cut) and self.toolbox.get("read_output") is None:
            self.toolbox.add([read_output_tool(self.outputs, self._read_output_chars)])
        return fitted

    def _result_budget(self) -> int:
        return result_budget(self.window.budget.window)

    def _read_output_chars(self) -> int:
        """What one read_output returns at most: its result's share of the window, less room
        for the JSON around the text, so reading on is never cut again."""
        return self._result_budget() * 3 // 4

    def answer(self, call_id: str, choice: ApprovalChoice, reason: str = "") -> bool:
        return self.approvals.answer(call_id, choice, reason)

    def listing(self) -> ToolsListed:
        """`/tools`: every tool offered, how its calls are decided, and the MCP servers."""
        tools = [
            ToolInfo(
                name=tool.name,
                source=tool.source,
                risk=tool.risk,
                approval=self.approvals.status(tool),
                description=tool.description.split("\n")[0][:200],
            )
            for tool in self.toolbox
        ]
        servers = self.hub.servers() if self.hub else []
        project = str(self.project.folder) if self.project else ""
        sandbox = self.sandbox.describe() if self.toolbox.get("run_command") else ""
        return ToolsListed(tools=tools, servers=servers, project=project, sandbox=sandbox)

    async def aclose(self) -> None:
        if self.hub is not None:
            await self.hub.aclose()

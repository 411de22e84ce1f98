"""`/tools`: every tool the model may call (name, source, risk, how a call is decided) and the
MCP servers with their state."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from shell.events import ToolsListed
from shell.text import counted

APPROVAL_WORDS = {"free": "runs freely", "ask": "asks first", "allowed": "allowed"}


def tools_lines(event: ToolsListed) -> list[str]:
    """The listing as plain lines (for `describe`)."""
    lines = [f"tools ({len(event.tools)}) · project {event.project or 'none'}"]
    if event.sandbox:
        lines.append(f"commands: {event.sandbox}")
    for tool in event.tools:
        lines.append(f"  {tool.name}  {tool.source}  {tool.risk}  {APPROVAL_WORDS[tool.approval]}")
    for server in event.servers:
        detail = f" · {server.detail}" if server.detail else ""
        lines.append(
            f"  mcp {server.name} ({server.transport}): {server.state}, "
            f"{counted(len(server.tools), 'tool')}{detail}"
        )
    return lines


class ToolsBlock(Static):
    """The tools and MCP servers, as `/tools` listed them."""

    DEFAULT_CSS = """
    ToolsBlock {
        height: auto;
        margin: 0 0 1 0;
        padding: 0 1;
        border-left: outer $tool-card-border;
    }
    """

    def __init__(self, event: ToolsListed) -> None:
        self.event = event
        super().__init__(self._view())

    def _view(self) -> Group:
        event = self.event
        heading = Text.assemble(
            ("tools ", "bold"), f"{len(event.tools)} · project ", event.project or "none"
        )
        table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold")
        table.add_column("tool", no_wrap=True, overflow="ellipsis", ratio=2)
        table.add_column("source", no_wrap=True, overflow="ellipsis", ratio=1)
        table.add_column("risk", no_wrap=True)
        table.add_column("approval", no_wrap=True)
        for tool in event.tools:
            approval = APPROVAL_WORDS[tool.approval]
            style = "bold" if tool.approval == "ask" else ""
            table.add_row(tool.name, tool.source, tool.risk, Text(approval, style=style))
        parts: list[Text | Table] = [heading]
        if event.sandbox:
            unsandboxed = event.sandbox.startswith("unsandboxed")
            parts.append(Text.assemble("commands ", (event.sandbox, "bold" if unsandboxed else "")))
        parts.append(table)
        if event.servers:
            parts.append(Text("mcp servers", style="bold"))
            for server in event.servers:
                line = Text(f"  {server.name} ({server.transport}): ")
                line.append(server.state, style="bold" if server.state != "ready" else "")
                line.append(f", {counted(len(server.tools), 'tool')}")
                if server.detail:
                    line.append(f" · {server.detail}", style="italic")
                parts.append(line)
        return Group(*parts)

    def describe(self) -> str:
        return "\n".join(tools_lines(self.event))

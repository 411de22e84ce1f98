"""`cairn tools`: what the model may call.

    cairn tools [--json] [--project DIR] [--yes] [--allow RULE]…
                                the tools the model may call, their approvals, the MCP servers

The MCP servers are started, listed and stopped; exit code 1 when one failed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from dataclasses import asdict

from shell.config import Settings
from shell.events import ToolsListed
from shell.headless.options import Subcommands, add_model, add_tool_options, add_workspace
from shell.headless.output import Out


def add_parser(sub: Subcommands) -> None:
    tools = sub.add_parser("tools", help="the tools the model may call and their approvals")
    add_tool_options(tools, inherit=True)
    tools.add_argument("--json", action="store_true", help="the listing as JSON")
    add_workspace(tools, inherit=True)
    add_model(tools, inherit=True)


async def tools_command(settings: Settings, *, as_json: bool, out: Out) -> int:
    """`cairn tools`: start the MCP servers, list every tool, stop. Exit 1 if a server failed."""
    from shell.build import build_agent

    agent = build_agent(settings, index_in_background=False, interactive=False)
    try:
        async for _ in agent.start():
            pass
        listing = agent.listed_tools()
    finally:
        await agent.aclose()
    out.write(json.dumps(asdict(listing), indent=2) + "\n" if as_json else listing_text(listing))
    return 1 if any(server.state == "failed" for server in listing.servers) else 0


def listing_text(listing: ToolsListed) -> str:
    lines = [f"project: {listing.project or '(none)'}"]
    if listing.sandbox:
        lines.append(f"commands: {listing.sandbox}")
    lines.append("")
    for tool in listing.tools:
        lines.append(f"{tool.name:<28} {tool.source:<14} {tool.risk:<8} {tool.approval:<8}")
        lines.append(f"    {tool.description}")
    for server in listing.servers:
        tools = ", ".join(server.tools) or "no tools"
        detail = f" — {server.detail}" if server.detail else ""
        lines.append(f"mcp {server.name} ({server.transport}): {server.state}{detail}; {tools}")
    return "\n".join(lines) + "\n"


def run_tools_command(settings: Settings, args: argparse.Namespace, out: Out) -> int:
    return asyncio.run(tools_command(settings, as_json=args.json, out=out))

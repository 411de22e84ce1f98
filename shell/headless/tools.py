"""The project folder and the approval policy on the command line, and `cairn tools`.

    cairn [run|serve|tools] [--project DIR] [--yes] [--allow RULE]…
    cairn tools [--json]        the tools the model may call, their approvals, the MCP servers

The project folder is the folder Cairn was started in unless `--project` names another.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, TextIO

from shell.config import ConfigError, Settings
from shell.events import ToolsListed


def add_options(parser: argparse.ArgumentParser, *, inherit: bool = False) -> None:
    """`--project`, `--yes` and `--allow`, for the commands that run an agent (`inherit`: an
    option left out keeps what was given before the subcommand)."""
    default: dict[str, Any] = {"default": argparse.SUPPRESS} if inherit else {}
    parser.add_argument(
        "--project",
        type=Path,
        help="the folder the project tools work in (default: the current folder)",
        **default,
    )
    parser.add_argument(
        "--yes",
        action="store_true",
        help="allow every edit, command and MCP call without asking",
        **default,
    )
    parser.add_argument(
        "--allow",
        action="append",
        metavar="RULE",
        default=argparse.SUPPRESS if inherit else [],
        help="allow calls without asking: a tool, or tool:pattern, e.g. 'run_command:pytest*'",
    )


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    tools = sub.add_parser("tools", help="the tools the model may call and their approvals")
    add_options(tools, inherit=True)
    tools.add_argument("--json", action="store_true", help="the listing as JSON")


def with_tool_options(settings: Settings, args: argparse.Namespace) -> Settings:
    """`settings` with the project folder and the flags' approval policy."""
    named = getattr(args, "project", None)
    project = (named or Path.cwd()).expanduser().resolve()
    if not project.is_dir():
        raise ConfigError(f"--project {project} is not a folder")
    tools = replace(settings.tools, project="on") if named else settings.tools
    if getattr(args, "yes", False):
        tools = replace(tools, approval="yes")
    if rules := getattr(args, "allow", None):
        tools = replace(tools, allow=(*tools.allow, *rules))
    return replace(settings, project=project, tools=tools)


async def tools_command(settings: Settings, *, as_json: bool, out: TextIO) -> int:
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
    lines = [f"project: {listing.project or '(none)'}", ""]
    for tool in listing.tools:
        lines.append(f"{tool.name:<28} {tool.source:<14} {tool.risk:<8} {tool.approval:<8}")
        lines.append(f"    {tool.description}")
    for server in listing.servers:
        tools = ", ".join(server.tools) or "no tools"
        detail = f" — {server.detail}" if server.detail else ""
        lines.append(f"mcp {server.name} ({server.transport}): {server.state}{detail}; {tools}")
    return "\n".join(lines) + "\n"


def run_tools_command(settings: Settings, args: argparse.Namespace, out: TextIO) -> int:
    return asyncio.run(tools_command(settings, as_json=args.json, out=out))

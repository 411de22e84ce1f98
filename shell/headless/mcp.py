"""`cairn mcp`: the workspace's memory as an MCP server, for any agent (`shell.mcp_server`).

    cairn mcp [--read-only] [--trace FILE]                      on stdio (the client starts it)
    cairn mcp --http [--host H] [--port P] [--token T] [...]    streamable HTTP on loopback

On stdio, stdout is the protocol's: what the server says goes to stderr, one short line per
call, write or problem (no memory text: a client keeps its servers' stderr in its logs), and
every event to `--trace`. Exit code 0 when the client hangs up (stdio) or on ctrl+c or SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from shell.config import Settings, project_folder
from shell.events import (
    Error,
    Event,
    McpCallServed,
    MemoryWritten,
    Notice,
    SecretsRedacted,
)
from shell.headless.options import Subcommands, add_workspace, inherited
from shell.headless.output import Out, Printable
from shell.sync.describe import sync_line
from shell.text import counted, short_sha

if TYPE_CHECKING:
    from shell.mcp_server.server import MemoryServer
    from shell.session.trace import TraceWriter

DEFAULT_PORT = 8765


def add_parser(sub: Subcommands) -> None:
    mcp = sub.add_parser(
        "mcp",
        help="serve this memory to other agents over MCP (stdio, or --http)",
        description="Offer the workspace's memory to any MCP client: search, read, append, the "
        "curated write, the dream review and the history; MEMORY.md and today's note as "
        "resources. Every write is a commit that names the client.",
    )
    add_workspace(mcp, inherit=True)
    mcp.add_argument(
        "--read-only",
        action="store_true",
        help="offer search and reads only: no write, no decision, no commit",
    )
    mcp.add_argument(
        "--http",
        action="store_true",
        help="serve streamable HTTP on loopback instead of stdio (wants the token)",
    )
    mcp.add_argument("--host", default="127.0.0.1", help="loopback address (default 127.0.0.1)")
    mcp.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: any)"
    )
    mcp.add_argument(
        "--token",
        help="the bearer token HTTP clients send (default: $CAIRN_MCP_TOKEN, else a new random "
        "one, printed); other users see a command line in `ps`: prefer the variable",
    )
    mcp.add_argument(
        "--trace", type=Path, help="also write every event as a JSON line to this file"
    )
    mcp.add_argument(
        "--project",
        type=Path,
        help="the client's project folder: citations of its files (README.md#L12) are hashed "
        "when written and checked when recalled (default: none, they are not)",
        **inherited(True),
    )


def run_mcp(settings: Settings, args: argparse.Namespace, out: Out) -> int:
    from shell.access import server_token
    from shell.mcp_server.http import TOKEN_ENV, HttpPlan, bind
    from shell.mcp_server.server import MemoryServer

    if named := getattr(args, "project", None):
        settings = replace(settings, project=project_folder(named))
    log = ServedLog(Printable(sys.stderr), args.trace)
    try:
        if not args.http:
            from shell.mcp_server.stdio import serve_stdio

            server = MemoryServer(settings, read_only=args.read_only, transport="stdio", emit=log)
            where = f"serving {settings.workspace} over stdio" + _read_only(server)
            log.say(where)
            asyncio.run(serve_stdio(server, log.say))
            return 0
        token = server_token(args.token, os.environ, TOKEN_ENV)
        sock = bind(args.host, args.port)
        plan = HttpPlan(args.host, sock.getsockname()[1], token)
        server = MemoryServer(settings, read_only=args.read_only, transport="http", emit=log)

        def say(line: str) -> None:
            out.write(line + "\n")
            out.flush()

        from shell.mcp_server.http import serve_http

        asyncio.run(serve_http(server, plan, sock, say))
        return 0
    finally:
        log.close()


def _read_only(server: MemoryServer) -> str:
    return " (read-only: search and reads only)" if server.read_only else ""


class ServedLog:
    """What `cairn mcp` says: a short line per fact on stderr, every event to the trace."""

    def __init__(self, err: Out, trace: Path | None) -> None:
        from shell.session.trace import TraceWriter

        self.err = err
        self.trace: TraceWriter | None = TraceWriter(trace) if trace else None

    def __call__(self, event: Event) -> None:
        if self.trace is not None:
            self.trace.write(event)
        if (line := served_line(event)) is not None:
            self.say(line)

    def say(self, line: str) -> None:
        self.err.write(f"cairn mcp: {line}\n")
        self.err.flush()

    def close(self) -> None:
        if self.trace is not None:
            self.trace.close()


def served_line(event: Event) -> str | None:
    """One line for an event, naming no memory text (paths, counts and commits only)."""
    match event:
        case McpCallServed(client=client, tool=tool, error=error, duration_ms=ms):
            done = f"{client} called {tool} ({ms:.0f} ms)"
            return f"{done}: {error}" if error else done
        case MemoryWritten(path=path, commit=commit, lines_added=added, reason=reason):
            where = short_sha(commit) if commit else event.commit_error or "nothing new"
            return f"{path} written ({reason}, +{counted(added, 'line')}) → {where}"
        case SecretsRedacted(path=path, kinds=kinds):
            return f"redacted {', '.join(kinds)} before writing {path}"
        case Error(message=message) | Notice(message=message):
            return message
    return sync_line(event)

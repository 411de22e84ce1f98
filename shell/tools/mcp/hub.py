"""Every MCP server of the config, for one agent: started together, their tools offered,
their state changes reported, all stopped at the end."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from pathlib import Path

from shell.config import McpServerSettings
from shell.events import McpServerChanged, McpServerInfo, Notice
from shell.secrets.door import open_private, private_folder
from shell.tools.mcp.offer import offered
from shell.tools.mcp.server import McpServer
from shell.tools.mcp.tools import tool_name, wrap
from shell.tools.toolbox import Tool

SDK_LOG = "mcp-sdk.log"
"""Where the SDK's own log records go (never the terminal: the TUI owns it)."""


class McpHub:
    """The configured MCP servers. `start` once, then `offer` for the model, `servers` for
    `/tools`, `drain` after each round of calls for the servers that changed (one died),
    `aclose` at the end."""

    def __init__(self, servers: Sequence[McpServerSettings], *, log_dir: Path) -> None:
        self._log_dir = log_dir
        self._servers = [McpServer(settings, log_dir) for settings in servers]

    async def start(self) -> list[McpServerChanged]:
        """Start the enabled servers concurrently, each within its `startup_timeout`: one
        event per server, "ready" with its tools or "failed" with why. Never raises."""
        enabled = [server for server in self._servers if server.settings.enabled]
        if not enabled:
            return []
        try:
            private_folder(self._log_dir)
            _route_sdk_log(self._log_dir / SDK_LOG)
        except OSError:
            pass  # the servers report their own log trouble
        return list(await asyncio.gather(*(server.start() for server in enabled)))

    def tools(self) -> list[Tool]:
        """The ready servers' tools, as Cairn tools (`offer` says which the model gets)."""
        return [tool for _, tools in self._wrapped() for tool in tools]

    def offer(self, window: int, *, taken: int = 0) -> tuple[list[Tool], list[Notice]]:
        """The ready servers' tools the model may be offered at a `window` of that many
        tokens, beside tools whose schemas take `taken`; and a notice for each server with
        tools refused (see `offer.py`)."""
        return offered(self._wrapped(), window, taken=taken)

    def _wrapped(self) -> list[tuple[str, list[Tool]]]:
        taken: set[str] = set()
        servers: list[tuple[str, list[Tool]]] = []
        for server in self._servers:
            if server.state != "ready":
                continue
            tools: list[Tool] = []
            for spec in server.tools:
                name = tool_name(server.name, spec.name, taken)
                taken.add(name)
                tools.append(wrap(server, spec, name))
            servers.append((server.name, tools))
        return servers

    def servers(self) -> list[McpServerInfo]:
        return [server.info() for server in self._servers]

    def drain(self) -> list[McpServerChanged]:
        """The servers' state changes noticed since `start` or the last drain."""
        return [change for server in self._servers for change in server.drain()]

    async def aclose(self) -> None:
        """Stop every server; no process of theirs outlives this."""
        await asyncio.gather(*(server.stop() for server in self._servers))


def _route_sdk_log(path: Path) -> None:
    """Send the SDK's log records (warnings of a malformed message…) to `path`: without a
    handler, Python would print them on the terminal."""
    logger = logging.getLogger("mcp")
    if any(getattr(handler, "_cairn", False) for handler in logger.handlers):
        return
    open_private(path, "a").close()  # 0600 before the handler opens it
    handler = logging.FileHandler(path, encoding="utf-8", delay=True)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    handler._cairn = True  # type: ignore[attr-defined]
    logger.addHandler(handler)

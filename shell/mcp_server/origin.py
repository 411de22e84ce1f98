"""Who a call of `cairn mcp` comes from: the client's name, as its commits say it.

A client names itself in its `initialize` request (`clientInfo`); nothing checks that name, so
it is cleaned to one short token before it reaches a commit message: no newline or space that
could forge another line of the body (`session … turn …`, which the history reads), no control
character, at most `MAX_NAME` characters.
"""

from __future__ import annotations

import contextvars
import re
from dataclasses import dataclass

from shell.events import McpTransport

MAX_NAME = 64
MAX_VERSION = 32
UNNAMED = "unnamed"
_UNSAFE = re.compile(r"[^A-Za-z0-9._+@/-]+")


@dataclass(frozen=True)
class Client:
    """An MCP client as a commit names it."""

    name: str
    version: str
    transport: McpTransport

    @property
    def origin(self) -> str:
        """The line of a write's commit body: `mcp client <name> <version> over <transport>`
        (`shell.git.history` reads the name back)."""
        version = f" {self.version}" if self.version else ""
        return f"mcp client {self.name}{version} over {self.transport}"


def client(name: object, version: object, transport: McpTransport) -> Client:
    """The client that named itself `name` (and `version`), each cleaned to one token."""
    return Client(_token(name, MAX_NAME) or UNNAMED, _token(version, MAX_VERSION), transport)


def _token(value: object, limit: int) -> str:
    if not isinstance(value, str):
        return ""
    return _UNSAFE.sub("_", value.strip())[:limit].strip("_")


CURRENT: contextvars.ContextVar[Client] = contextvars.ContextVar("mcp_client")
"""The client whose call runs in this task (set by the server around each call)."""


def current_origin() -> str:
    """The origin of the call running now, for the memory tools' commits."""
    return CURRENT.get(Client(UNNAMED, "", "stdio")).origin

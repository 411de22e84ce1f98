"""An MCP server's tools as Cairn tools: named `<server>__<tool>`, described by the server,
validated against its input schema (offline: `schemas.py`), approved as "execute" calls, run
on its connection."""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from shell.text import shorten
from shell.tools.mcp.schemas import OfflineValidator, object_schema
from shell.tools.mcp.server import McpServer
from shell.tools.toolbox import CallContext, CallPreview, Tool, ToolResult

if TYPE_CHECKING:
    import mcp_types

NAME_LIMIT = 64
DESCRIPTION_LIMIT = 1_000
_NOT_NAME = re.compile(r"[^a-zA-Z0-9_-]")


def tool_name(server: str, tool: str, taken: set[str]) -> str:
    """`<server>__<tool>` as providers accept a function name (`^[a-zA-Z0-9_-]{1,64}$`);
    a name cut short, or one another tool already has, ends in a hash of the original."""
    name = _NOT_NAME.sub("_", f"{server}__{tool}")
    if len(name) <= NAME_LIMIT and name not in taken:
        return name
    digest = hashlib.sha1(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[: NAME_LIMIT - 9]}_{digest}"


@dataclass(frozen=True)
class McpTool(Tool):
    """A server's tool: its arguments are validated with the schema's references kept inside
    the schema (the server wrote it; a `$ref` to a URL is never fetched)."""

    @functools.cached_property
    def validator(self) -> Any:
        return OfflineValidator(self.parameters)


def wrap(server: McpServer, spec: mcp_types.Tool, name: str) -> Tool:
    """One of `server`'s tools as a Cairn tool named `name`."""
    tool = spec.name
    description = spec.description or spec.title or tool

    async def run(arguments: dict[str, Any], context: CallContext) -> ToolResult:
        return await server.call(tool, arguments, context.cancelled)

    async def preview(arguments: dict[str, Any]) -> CallPreview:
        detail = json.dumps(arguments, indent=2, ensure_ascii=False, sort_keys=True)
        return CallPreview(summary=f"{server.name}: {tool}", subject="", detail=detail)

    return McpTool(
        name=name,
        description=shorten(f"[{server.name}] {description.strip()}", DESCRIPTION_LIMIT),
        parameters=object_schema(spec.input_schema),
        run=run,
        risk="execute",
        preview=preview,
        source=f"mcp:{server.name}",
    )

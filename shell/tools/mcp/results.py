"""What the model reads of an MCP tool's result.

Text blocks are joined; the structured content is JSON when there is no text (a server that
sends both sends the same thing twice); images, audio and binary resources are one line each
("[image image/png, 1234 bytes]"), never their bytes. A result the server flags `isError` is
an error result with the server's own words.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from shell.text import trim_middle
from shell.tools.toolbox import ToolResult

if TYPE_CHECKING:
    import mcp_types

RESULT_LIMIT = 50_000
"""Characters of a result the model reads; the middle of a longer one is cut."""


def tool_result(result: mcp_types.CallToolResult) -> ToolResult:
    """The Cairn result of one MCP call."""
    parts = [_block_text(block) for block in result.content]
    if result.structured_content is not None and not any(
        block.type == "text" for block in result.content
    ):
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    text = trim_middle("\n".join(part for part in parts if part), RESULT_LIMIT)
    if result.is_error:
        message = text or "the tool reported an error"
        return ToolResult(content=f"Error: {message}", error=message)
    return ToolResult(content=text or "(no output)")


def error_result(message: str) -> ToolResult:
    return ToolResult(content=f"Error: {message}", error=message)


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", "")
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        return f"[{kind} {block.mime_type}, {_decoded_size(block.data)} bytes]"
    if kind == "resource_link":
        return f"[resource {block.uri}{_mime(block.mime_type)}]"
    if kind == "resource":
        resource = block.resource
        if hasattr(resource, "text"):
            return f"[resource {resource.uri}]\n{resource.text}"
        size = _decoded_size(resource.blob)
        return f"[resource {resource.uri}{_mime(resource.mime_type)}, {size} bytes]"
    return f"[{kind or 'unknown'} content]"


def _mime(mime_type: str | None) -> str:
    return f" {mime_type}" if mime_type else ""


def _decoded_size(data: str) -> int:
    """Bytes of base64 `data`, without decoding it."""
    data = data.strip()
    return max(0, len(data) * 3 // 4 - data[-2:].count("="))

"""One line on why an MCP server did not start or stopped: what a notice shows."""

from __future__ import annotations

from pathlib import Path

from shell.config import McpServerSettings
from shell.text import collapse, shorten

LINE_LIMIT = 200


def exception_leaves(error: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, in order; `error` itself otherwise."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in exception_leaves(inner)]
    return [error]


def is_connection_closed(error: BaseException) -> bool:
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED

    return any(
        isinstance(leaf, MCPError) and leaf.code == CONNECTION_CLOSED
        for leaf in exception_leaves(error)
    )


def startup_failure(error: BaseException, settings: McpServerSettings) -> str:
    """Why a server failed to start, from what its start raised (not a closed connection:
    the exit code says more, see `exit_detail`)."""
    import httpx2
    from mcp.shared.exceptions import MCPError

    leaf = exception_leaves(error)[0]
    command = settings.command or ""
    if isinstance(leaf, FileNotFoundError):
        if settings.cwd and not Path(settings.cwd).is_dir():
            return f"working directory not found: {settings.cwd}"
        return f"command not found: {command}"
    if isinstance(leaf, PermissionError):
        return f"permission denied running {command}"
    if isinstance(leaf, httpx2.ConnectError):
        return f"HTTP connection refused: {settings.url}"
    if isinstance(leaf, httpx2.TimeoutException):
        return f"HTTP timeout: {settings.url}"
    if isinstance(leaf, httpx2.HTTPStatusError):
        return f"HTTP {leaf.response.status_code} from {settings.url}"
    if isinstance(leaf, MCPError):
        return one_line(f"the server refused the handshake: {leaf.message}")
    if isinstance(leaf, OSError):
        return one_line(f"could not start {command}: {leaf.strerror or leaf}")
    return one_line(f"{type(leaf).__name__}: {leaf}")


def exit_detail(returncode: int | None, stderr_line: str) -> str:
    """A server that went away: how it exited, and the last line it wrote to stderr."""
    if returncode is None:
        what = "closed the connection"
    elif returncode < 0:
        what = f"was killed by signal {-returncode}"
    else:
        what = f"exited with code {returncode}"
    return one_line(f"{what}: {stderr_line}") if stderr_line else what


def last_line(path: Path, offset: int) -> str:
    """The last non-blank line written to the log at `path` after `offset`."""
    try:
        with path.open("rb") as log:
            size = log.seek(0, 2)
            log.seek(max(offset, size - 4096))
            tail = log.read().decode("utf-8", "replace")
    except OSError:
        return ""
    lines = [line for line in tail.splitlines() if line.strip()]
    return one_line(lines[-1]) if lines else ""


def one_line(text: str) -> str:
    return shorten(collapse(text), LINE_LIMIT)

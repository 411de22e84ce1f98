"""One MCP server: a supervisor task that owns its connection, and the calls made on it.

The SDK's transports and session are anyio context managers whose cancel scopes must be
entered and exited by one task. So each server has a supervisor task that opens the
transport and the session, initialises, lists the tools, reports ready, then holds the
connection until it is stopped or the server goes away; calls run in the callers' tasks on
the open session. Whatever the supervisor meets ends as the server's state ("failed" with a
one-line `detail`), never as an exception.

A stdio server's stderr goes to `<log dir>/<name>.log` (the TUI owns the terminal).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from shell.config import McpServerSettings
from shell.events import McpServerChanged, McpServerInfo, McpState, McpTransport
from shell.secrets.door import open_private, private_folder
from shell.tools.mcp import spawn
from shell.tools.mcp.failures import (
    exit_detail,
    is_connection_closed,
    last_line,
    one_line,
    startup_failure,
)
from shell.tools.mcp.results import error_result, tool_result
from shell.tools.toolbox import ToolResult

if TYPE_CHECKING:
    import anyio
    import mcp_types
    from mcp.client._transport import TransportStreams
    from mcp.client.session import ClientSession, IncomingMessage

STOP_TIMEOUT = 10.0
"""Seconds a stop waits for the SDK's own shutdown (stdin closed, then SIGTERM, SIGKILL)."""
DEATH_WAIT = 5.0
"""Seconds a call that lost its server waits for the supervisor to learn how it ended."""
CALL_GRACE = 2.0
"""Seconds past `call_timeout` before a call stops waiting for the SDK's own timeout."""
CLIENT_NAME = "cairn"


class McpServer:
    """One configured server: its state, its tools once ready, and calls to them."""

    def __init__(self, settings: McpServerSettings, log_dir: Path) -> None:
        self.settings = settings
        self.name = settings.name
        self.transport: McpTransport = "http" if settings.url else "stdio"
        self.state: McpState = "starting" if settings.enabled else "stopped"
        self.detail = "" if settings.enabled else "disabled"
        self.tools: list[mcp_types.Tool] = []
        self.log_path = log_dir / (re.sub(r"[^\w.-]", "_", settings.name) + ".log")
        self._log_offset = 0
        self._session: ClientSession | None = None
        self._process: spawn.Process | None = None
        self._scope: anyio.CancelScope | None = None
        self._task: asyncio.Task[None] | None = None
        self._settled = asyncio.Event()
        """Set when the server is ready or failed to start."""
        self._closed = asyncio.Event()
        """Set when the connection ended by itself (a stdio server's stdout closed)."""
        self._ended = asyncio.Event()
        """Set when the supervisor is done."""
        self._stopping = False
        self._announced = False
        self._pending: list[McpServerChanged] = []

    def info(self) -> McpServerInfo:
        names = [tool.name for tool in self.tools] if self.state == "ready" else []
        return McpServerInfo(self.name, self.transport, self.state, names, self.detail)

    async def start(self) -> McpServerChanged:
        """Start the server and wait until it is ready or failed, at most its
        `startup_timeout`; the event says which. Never raises."""
        try:
            self._task = asyncio.create_task(self._supervise(), name=f"mcp:{self.name}")
            timeout = self.settings.startup_timeout
            try:
                await asyncio.wait_for(self._settled.wait(), timeout)
            except TimeoutError:
                self._set("failed", f"did not start within {timeout:g} s")
                self._cancel()
        except Exception as error:  # a bug here must not end the session
            self._set("failed", one_line(f"{type(error).__name__}: {error}"))
            self._cancel()
        self._announced = True
        return McpServerChanged(self.info())

    def drain(self) -> list[McpServerChanged]:
        """State changes since `start` returned, or since the last drain."""
        pending, self._pending = self._pending, []
        return pending

    async def stop(self) -> None:
        """Stop the server and wait for its process to end (bounded)."""
        self._stopping = True
        self._cancel()
        if self._task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._task), STOP_TIMEOUT)
            except TimeoutError:
                self._task.cancel()
                with contextlib.suppress(BaseException):
                    await self._task
            except BaseException:
                pass  # the supervisor reports its own failures as state
        if self.state in ("starting", "ready"):
            self._set("stopped", "")

    async def call(
        self, tool: str, arguments: dict[str, Any], cancelled: asyncio.Event
    ) -> ToolResult:
        """Call `tool`; a timeout, a cancel, an error or the server's death is an error
        result (a timeout or the death also with the server's `McpServerChanged`)."""
        session = self._session
        if session is None or self.state != "ready":
            why = f" ({self.detail})" if self.detail else ""
            return error_result(f"MCP server {self.name} is not running{why}")
        timeout = self.settings.call_timeout
        request = asyncio.ensure_future(
            session.call_tool(tool, arguments, read_timeout_seconds=timeout)
        )
        watcher = asyncio.ensure_future(cancelled.wait())
        try:
            await asyncio.wait(
                (request, watcher),
                timeout=timeout + CALL_GRACE,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            watcher.cancel()
        if not request.done():
            request.cancel()
            with contextlib.suppress(BaseException):
                await request
            if cancelled.is_set():
                return error_result("cancelled")
            return self._no_answer()
        try:
            return tool_result(request.result())
        except Exception as error:
            return await self._call_failed(error)

    async def _call_failed(self, error: Exception) -> ToolResult:
        from mcp.shared.exceptions import MCPError
        from mcp_types import REQUEST_TIMEOUT

        if isinstance(error, MCPError) and error.code == REQUEST_TIMEOUT:
            return self._no_answer()
        if is_connection_closed(error):
            return await self._died_during_call()
        if isinstance(error, MCPError):
            message = error.message
        else:
            message = f"{type(error).__name__}: {error}"
        return error_result(f"MCP server {self.name}: {one_line(message)}")

    def _no_answer(self) -> ToolResult:
        """A call past `call_timeout`: the server is taken for unresponsive and stopped like
        one that died, so its tools are withdrawn (one notice, from the first call to meet it)."""
        timeout = self.settings.call_timeout
        if self.state == "ready":
            self._set("failed", f"did not answer a call within {timeout:g} s")
            self._cancel()
        failure = self._take_failure()
        message = f"MCP server {self.name} did not answer within {timeout:g} s"
        return ToolResult(
            content=f"Error: {message}; its tools are no longer offered",
            error=message,
            events=(failure,) if failure else (),
        )

    async def _died_during_call(self) -> ToolResult:
        if self._stopping:
            return error_result(f"MCP server {self.name} was stopped during the call")
        if self.transport == "stdio":  # the supervisor learns the exit code
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._ended.wait(), DEATH_WAIT)
        if self.state in ("starting", "ready"):
            self._set("failed", "closed the connection during a call")
            self._cancel()
        failure = self._take_failure()
        message = f"MCP server {self.name} stopped during the call: {self.detail}"
        return ToolResult(
            content=f"Error: {message}", error=message, events=(failure,) if failure else ()
        )

    def _take_failure(self) -> McpServerChanged | None:
        """The pending notice of this server's failure, for the call that met it (so the
        notice is given once: by the call's result, or by `drain`, whichever comes first)."""
        for index, change in enumerate(self._pending):
            if change.server.state == "failed":
                return self._pending.pop(index)
        return None

    def _set(self, state: McpState, detail: str) -> None:
        """Move to `state`, once out of starting/ready: a later report of the same end (the
        supervisor after a call noticed) changes nothing."""
        if self.state not in ("starting", "ready"):
            return
        self.state, self.detail = state, detail
        if state != "ready":
            self._session = None
        if self._announced:
            self._pending.append(McpServerChanged(self.info()))
        if state != "starting":
            self._settled.set()

    def _cancel(self) -> None:
        if self._scope is not None:
            self._scope.cancel()

    async def _supervise(self) -> None:
        """Own the connection from start to end; every failure becomes the server's state."""
        import anyio

        log: TextIO | None = None
        try:
            if self._stopping:
                return
            with anyio.CancelScope() as scope:
                self._scope = scope
                log = self._open_log()
                await self._hold(log)
            if not scope.cancelled_caught:
                self._set("failed", self._exit_detail())
        except Exception as error:
            if is_connection_closed(error):
                self._set("failed", self._exit_detail())
            else:
                self._set("failed", startup_failure(error, self.settings))
        finally:
            self._session = None
            if log is not None:
                log.close()
            self._ended.set()
            self._settled.set()

    async def _hold(self, log: TextIO) -> None:
        """Connect, initialise, list the tools, report ready, and hold the connection until
        it ends by itself (a stop cancels this)."""
        from mcp.client.session import ClientSession
        from mcp_types import Implementation

        async with contextlib.AsyncExitStack() as stack:
            read, write = await self._connect(log, stack)
            session = await stack.enter_async_context(
                ClientSession(
                    _WatchedStream(read, self._closed),
                    write,
                    message_handler=self._message_handler(log),
                    client_info=Implementation(name=CLIENT_NAME, version="1"),
                )
            )
            await session.initialize()
            self.tools = await _list_tools(session)
            self._session = session
            self._set("ready", "")
            await self._closed.wait()

    async def _connect(self, log: TextIO, stack: contextlib.AsyncExitStack) -> TransportStreams:
        """Open the transport on `stack`: the server's process, or an HTTP client."""
        settings = self.settings
        if settings.url:
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            client = create_mcp_http_client(headers=dict(settings.headers))
            await stack.enter_async_context(client)
            return await stack.enter_async_context(
                streamable_http_client(settings.url, http_client=client)
            )
        if not settings.command:
            raise ValueError("no command or url in the config")
        from mcp.client.stdio import StdioServerParameters, stdio_client

        spawn.watch(self._spawned)
        parameters = StdioServerParameters(
            command=settings.command,
            args=list(settings.args),
            env=dict(settings.env) or None,
            cwd=settings.cwd,
        )
        return await stack.enter_async_context(stdio_client(parameters, errlog=log))

    def _spawned(self, process: spawn.Process) -> None:
        self._process = process

    def _open_log(self) -> TextIO:
        private_folder(self.log_path.parent)
        log = open_private(self.log_path, "a")  # a server's stderr, as it wrote it: 0600
        where = self.settings.url or " ".join((self.settings.command or "", *self.settings.args))
        log.write(f"--- cairn: starting {self.name} ({where}) ---\n")
        log.flush()
        self._log_offset = log.tell()
        return log

    def _message_handler(self, log: TextIO) -> Any:
        async def handle(message: IncomingMessage) -> None:
            if isinstance(message, Exception) and not log.closed:
                log.write(f"cairn: transport error: {type(message).__name__}: {message}\n")
                log.flush()

        return handle

    def _exit_detail(self) -> str:
        returncode = self._process.returncode if self._process is not None else None
        return exit_detail(returncode, last_line(self.log_path, self._log_offset))


async def _list_tools(session: ClientSession) -> list[mcp_types.Tool]:
    """Every tool of the server, across its pages."""
    from mcp_types import PaginatedRequestParams

    listing = await session.list_tools()
    tools = list(listing.tools)
    while listing.next_cursor:
        listing = await session.list_tools(
            params=PaginatedRequestParams(cursor=listing.next_cursor)
        )
        tools.extend(listing.tools)
    return tools


class _WatchedStream:
    """The transport's read stream, setting `closed` when it ends: how the supervisor learns
    that a stdio server went away while no call was running."""

    def __init__(self, stream: Any, closed: asyncio.Event) -> None:
        self._stream = stream
        self._closed = closed

    @property
    def last_context(self) -> Any:
        return getattr(self._stream, "last_context", None)

    async def receive(self) -> Any:
        try:
            return await self._stream.receive()
        except Exception:
            self._closed.set()
            raise

    async def aclose(self) -> None:
        await self._stream.aclose()

    def __aiter__(self) -> _WatchedStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self._stream.__anext__()
        except StopAsyncIteration:
            self._closed.set()
            raise

    async def __aenter__(self) -> _WatchedStream:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        result: bool | None = await self._stream.__aexit__(*exc_info)
        return result

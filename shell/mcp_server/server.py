"""One `cairn mcp`: the workspace's memory behind the MCP SDK's low-level server.

`MemoryServer` builds what Cairn's own session builds for memory (the memory door, recall, the
sync, dreaming's review, the history) and answers the SDK's requests with it: the tools of
`shell.mcp_server.offer`, the resources of `shell.mcp_server.resources`. Each call runs with its
client as the origin of what it commits (`shell.mcp_server.origin`); the facts it establishes
(a write, a search, a decision, the call itself) go to `emit` as Cairn's own events. Several
clients at once (several `cairn mcp` processes, or several sessions of one over HTTP) are safe:
every write holds the memory door's thread lock and its `flock`, then the repository's lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from shell.config import Settings
from shell.events import Event, McpCallServed, McpTransport
from shell.mcp_server import resources
from shell.mcp_server.offer import INSTRUCTIONS, WRITING, offer
from shell.mcp_server.origin import CURRENT, Client, client, current_origin
from shell.memory.paths import MemoryPathError
from shell.tools.toolbox import Tool, ToolResult

if TYPE_CHECKING:
    import mcp_types
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server

SERVER_NAME = "cairn-memory"
MAX_TOOL_NAME = 64
"""A called name longer than any offered one is not echoed whole in the refusal."""


class MemoryServer:
    """The memory of `settings.workspace`, served to MCP clients over `transport`.

    Args:
        settings: The workspace and its settings, as every command resolves them.
        read_only: Offer the tools that read only; commit nothing (no recovery, no sync).
        transport: How clients reach it, for the origin of their writes.
        emit: Where the facts go (the command prints them to stderr and a trace).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        read_only: bool,
        transport: McpTransport,
        emit: Callable[[Event], None],
    ) -> None:
        from shell.context.budget import configured_window
        from shell.dreaming import Dreamer
        from shell.git.history import MemoryHistory
        from shell.memory.citations.project import citation_stamper
        from shell.memory.files.door import MemoryFiles
        from shell.memory.service import RecallService
        from shell.readonly import read_only as unwritable
        from shell.sync.service import SyncService
        from shell.workspace import existing_workspace

        self.settings = settings
        self.transport = transport
        self.emit = emit
        self.git = existing_workspace(settings)
        self.read_only = read_only or unwritable(settings.workspace)
        self.files = MemoryFiles(
            settings.workspace,
            self.git,
            secrets=settings.secrets,
            citations=citation_stamper(settings),
        )
        outside = None if self.read_only else self.files.commit_outside_edits
        self.recall = RecallService(settings, outside_edits=outside)
        self.sync: SyncService | None = None
        if not self.read_only:
            self.sync = SyncService(
                settings.workspace,
                remote=settings.remote,
                author_name=settings.git_author_name,
                author_email=settings.git_author_email,
                push_delay=settings.sync_push_delay,
                reindex=lambda changed: self.recall.sync("pull"),
            )
            self.git.on_commit = self.sync.committed
        self.offer = offer(
            settings,
            files=self.files,
            recall=self.recall,
            dreamer=Dreamer(settings, files=self.files, git=self.git, recall=self.recall, llm=None),
            history=MemoryHistory(self.git),
            window=configured_window(settings).budget.window,
            origin=current_origin,
            read_only=self.read_only,
        )
        self._forwarders: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        """Finish what a kill left half done (unless read-only), then index and sync in the
        background, as a session does at its start."""
        if self.sync is not None:
            from shell.recovery import recover_interrupted

            root = self.settings.workspace
            for event in await asyncio.to_thread(recover_interrupted, root, self.git):
                self.emit(event)
            for event in await asyncio.to_thread(self.sync.recover):
                self.emit(event)
            self.sync.start()
            self._forward(self.sync.events())
        self.recall.start()
        self._forward(self.recall.events())

    async def aclose(self) -> None:
        """Stop indexing and watching, and make the push the writes owe (bounded)."""
        for task in self._forwarders:
            task.cancel()
        for task in self._forwarders:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.recall.aclose()
        events = self.recall.drain()
        if self.sync is not None:
            await self.sync.aclose()
            events += self.sync.drain()
        for event in events:
            self.emit(event)

    async def call(self, who: Client, name: str, arguments: dict[str, Any] | None) -> ToolResult:
        """One tool call of `who`, its facts emitted, then the `McpCallServed` that sums it up."""
        shown = name if len(name) <= MAX_TOOL_NAME else name[:MAX_TOOL_NAME] + "…"
        if self.offer.toolbox.get(name) is None:
            result = _refused(shown, self.offer.tools, self.read_only)
        else:
            token = CURRENT.set(who)
            try:
                result = await self.offer.toolbox.call(name, arguments or {})
            finally:
                CURRENT.reset(token)
        for event in result.events:
            self.emit(event)
        duration = round(result.duration_ms, 1)
        self.emit(McpCallServed(who.name, who.transport, shown, result.error, duration))
        return result

    def sdk(self) -> Server[Any]:
        """The SDK's server over this memory: tools and resources."""
        from mcp.server.lowlevel import Server

        return Server(
            SERVER_NAME,
            version="1",
            title="Cairn memory",
            instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_read_resource=self._read_resource,
        )

    # --- the SDK's handlers --------------------------------------------------------------

    async def _list_tools(
        self, _ctx: ServerRequestContext[Any], _params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        from mcp_types import ListToolsResult

        return ListToolsResult(tools=[_described(tool) for tool in self.offer.tools])

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        from mcp_types import CallToolResult, TextContent

        result = await self.call(self._client(ctx), params.name, params.arguments)
        structured = None
        if result.error is None:
            with contextlib.suppress(ValueError):
                payload = json.loads(result.content)
                structured = payload if isinstance(payload, dict) else None
        return CallToolResult(
            content=[TextContent(text=result.content)],
            structured_content=structured,
            is_error=result.error is not None,
        )

    async def _list_resources(
        self, _ctx: ServerRequestContext[Any], _params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListResourcesResult:
        from mcp_types import ListResourcesResult, Resource

        listed = resources.listed(self.settings.today())
        return ListResourcesResult(
            resources=[
                Resource(
                    uri=item.uri,
                    name=item.name,
                    description=item.description,
                    mime_type=resources.MIME,
                )
                for item in listed
            ]
        )

    async def _read_resource(
        self, _ctx: ServerRequestContext[Any], params: mcp_types.ReadResourceRequestParams
    ) -> mcp_types.ReadResourceResult:
        from mcp.shared.exceptions import MCPError
        from mcp_types import INVALID_PARAMS, ReadResourceResult, TextResourceContents

        try:
            text = await asyncio.to_thread(resources.read, self.files.root, params.uri)
        except MemoryPathError as error:
            raise MCPError(INVALID_PARAMS, str(error)) from None
        contents = TextResourceContents(uri=params.uri, mime_type=resources.MIME, text=text)
        return ReadResourceResult(contents=[contents])

    def _client(self, ctx: ServerRequestContext[Any]) -> Client:
        params = ctx.session.client_params
        info = params.client_info if params is not None else None
        name = info.name if info is not None else None
        return client(name, info.version if info is not None else None, self.transport)

    def _forward(self, events: AsyncIterator[Event]) -> None:
        async def forward() -> None:
            async for event in events:
                self.emit(event)

        self._forwarders.append(asyncio.get_running_loop().create_task(forward()))


def _refused(name: str, offered: list[Tool], read_only: bool) -> ToolResult:
    known = ", ".join(tool.name for tool in offered)
    if read_only and name in WRITING:
        message = f"{name} is not offered: this server is read-only (cairn mcp --read-only)"
    else:
        message = f"there is no tool {name!r} here; you may only call {known}"
    return ToolResult(content=f"Error: {message}", error=message)


def _described(tool: Tool) -> mcp_types.Tool:
    """A tool as a client lists it, with hints of what it does (a client may ask before a
    write on them)."""
    from mcp_types import Tool as McpTool
    from mcp_types import ToolAnnotations

    writes = tool.name in WRITING
    hints = ToolAnnotations(
        read_only_hint=not writes,
        destructive_hint=tool.name == "memory_write" if writes else None,
        idempotent_hint=tool.name == "memory_append" if writes else None,
        open_world_hint=False,
    )
    return McpTool(
        name=tool.name,
        description=tool.description,
        input_schema=tool.parameters,
        annotations=hints,
    )

"""Tools the model can call: a name, a JSON schema, and an async function.

Tool arguments come from the model and are untrusted. `Tool.call` validates them against the
schema and turns every failure into a `ToolResult` with `error` set, never an exception.

A tool that writes or executes (`risk`) is approved first: its `preview` says what the call will
do (a diff, a command line), and the toolbox's `Approver` decides (`shell.tools.approvals`). While a
call runs, its `CallContext` carries events out as they happen (a command's output) and says
when the user cancelled.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from shell.events import Event, ToolCallFinished, ToolRisk
from shell.text import sentences


class ToolError(Exception):
    """A clear, model-facing reason why a tool call was refused or failed."""


@dataclass(frozen=True)
class ToolResult:
    content: str
    """What the model sees (usually JSON text)."""
    error: str | None = None
    events: tuple[Event, ...] = ()
    """Facts the tool established (memory_written, search_performed, …) for the loop to emit."""
    duration_ms: float = 0.0

    def finished(self, call_id: str, name: str) -> ToolCallFinished:
        return ToolCallFinished(
            call_id=call_id,
            name=name,
            result=self.content,
            error=self.error,
            duration_ms=round(self.duration_ms, 1),
        )


def json_result(payload: Any, events: Sequence[Event] = ()) -> ToolResult:
    return ToolResult(content=json.dumps(payload, ensure_ascii=False), events=tuple(events))


def _discard(event: Event) -> None:
    pass


@dataclass
class CallContext:
    """One call as it runs: its id, where its live events go, and whether it was cancelled."""

    call_id: str = ""
    emit: Callable[[Event], None] = _discard
    """Events the call reports while it runs (a command's output, an approval), in order."""
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the user cancels the turn: a long call (a command) stops at once."""


@dataclass(frozen=True)
class CallPreview:
    """What a call that writes or executes will do, shown before it is approved.

    `subject` is what allow rules match (`shell.tools.approvals`): the command line of a
    `run_command`, the path of an edit, "" for an MCP tool (matched by its name alone).
    """

    summary: str
    subject: str = ""
    command: str | None = None
    diff: str | None = None
    detail: str | None = None


class Approver(Protocol):
    """Decides whether a call that writes or executes may run: None allows it, else the
    reason the model is told. It reports its decision as events through `context.emit`."""

    async def __call__(
        self, tool: Tool, preview: CallPreview, context: CallContext
    ) -> str | None: ...


async def _allow_all(tool: Tool, preview: CallPreview, context: CallContext) -> str | None:
    return None


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    """JSON schema of the arguments object."""
    run: Callable[[dict[str, Any], CallContext], Awaitable[ToolResult]] = field(repr=False)
    risk: ToolRisk = "read"
    preview: Callable[[dict[str, Any]], Awaitable[CallPreview]] | None = field(
        default=None, repr=False
    )
    """For a tool that writes or executes: what a call will do, for its approval. A `ToolError`
    here ends the call before anyone is asked (an edit whose text is not in the file)."""
    source: str = "memory"
    """Where the tool comes from, as `/tools` lists it: "memory", "project", "mcp:<server>"."""

    @functools.cached_property
    def validator(self) -> Any:
        """A validator for `parameters`, built once: `jsonschema.validate` checks the schema
        itself at every call, about 3 ms of a 4 ms `list_files`. A tool whose schema is not
        Cairn's own checks otherwise (an MCP server's: `McpTool`)."""
        import jsonschema

        return jsonschema.validators.validator_for(self.parameters)(self.parameters)

    def schema(self, *, compact: bool = False) -> dict[str, Any]:
        """The OpenAI function schema; `compact` keeps the description's first sentence and
        the arguments' types (for small context windows)."""
        description, parameters = self.description, self.parameters
        if compact:
            description = next(iter(sentences(description)), description)
            parameters = _types_only(parameters)
        return {
            "type": "function",
            "function": {"name": self.name, "description": description, "parameters": parameters},
        }

    async def call(
        self,
        raw_arguments: str | dict[str, Any] | None,
        timer: Callable[[], float] = time.perf_counter,
        context: CallContext | None = None,
        approve: Approver = _allow_all,
    ) -> ToolResult:
        """Validate, approve (a tool that writes or executes) and run one call; every failure,
        a refusal and a denial included, is an error result."""
        context = context or CallContext()
        started = timer()
        try:
            arguments = parse_arguments(raw_arguments)
            validate_arguments(arguments, self.validator)
            if self.risk in ("write", "execute"):
                preview = await self.preview(arguments) if self.preview else CallPreview(self.name)
                if (denied := await approve(self, preview, context)) is not None:
                    raise ToolError(denied)
                started = timer()  # the call's own time, not the user's to decide
            result = await self.run(arguments, context)
        except ToolError as error:
            result = ToolResult(content=f"Error: {error}", error=str(error))
        except Exception as error:  # a tool bug must not end the turn: report it
            message = f"{type(error).__name__}: {error}"
            result = ToolResult(content=f"Error: {message}", error=message)
        elapsed = (timer() - started) * 1000
        return ToolResult(result.content, result.error, result.events, elapsed)


def _types_only(schema: dict[str, Any]) -> dict[str, Any]:
    """The arguments' names, types and which are required: the limits stay in the full schema,
    which `call` validates against, so a model that breaks one gets the reason back."""
    properties = {
        name: {k: v for k, v in spec.items() if k in ("type", "enum", "items")}
        for name, spec in schema.get("properties", {}).items()
    }
    return {"type": "object", "properties": properties, "required": schema.get("required", [])}


def parse_arguments(raw: str | dict[str, Any] | None) -> dict[str, Any]:
    if raw is None or raw == "":
        return {}
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as error:
        raise ToolError(f"arguments are not valid JSON ({error.msg} at char {error.pos})") from None
    if not isinstance(value, dict):
        raise ToolError("arguments must be a JSON object")
    return value


def event_arguments(raw: str | dict[str, Any] | None) -> dict[str, Any]:
    """Arguments for a tool_call_started event: parsed, or kept raw when they are not JSON."""
    try:
        return parse_arguments(raw)
    except ToolError:
        return {"_raw": str(raw)}


def validate_arguments(arguments: dict[str, Any], validator: Any) -> None:
    import jsonschema

    try:
        validator.validate(arguments)
    except jsonschema.ValidationError as error:
        where = ".".join(str(p) for p in error.absolute_path)
        raise ToolError(
            f"invalid argument{' ' + where if where else ''}: {error.message}"
        ) from None


class Toolbox:
    """The tools offered to the model for one call."""

    def __init__(
        self,
        tools: Sequence[Tool] = (),
        *,
        timer: Callable[[], float] = time.perf_counter,
        approve: Approver = _allow_all,
    ) -> None:
        """`timer`: monotonic seconds, for each call's duration. `approve`: decides the calls
        that write or execute (the default allows them: memory-only toolboxes, tests)."""
        self._tools = {tool.name: tool for tool in tools}
        self._timer = timer
        self.approve = approve

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def add(self, tools: Sequence[Tool]) -> None:
        """Offer more tools from the next model call on (an MCP server that came up)."""
        self._tools.update((tool.name, tool) for tool in tools)

    def remove(self, source: str) -> None:
        """Stop offering the tools of `source` (an MCP server that stopped)."""
        self._tools = {n: t for n, t in self._tools.items() if t.source != source}

    def offers(self, source: str) -> bool:
        """Whether any tool of `source` ("memory", "project", an MCP server's) is offered."""
        return any(tool.source == source for tool in self._tools.values())

    def schemas(self, *, compact: bool = False) -> list[dict[str, Any]]:
        return [tool.schema(compact=compact) for tool in self._tools.values()]

    async def call(
        self,
        name: str,
        raw_arguments: str | dict[str, Any] | None,
        context: CallContext | None = None,
    ) -> ToolResult:
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(self._tools) or "none"
            message = f"there is no tool {name!r} here; you may only call {known}"
            return ToolResult(content=f"Error: {message}", error=message)
        return await tool.call(raw_arguments, self._timer, context, self.approve)

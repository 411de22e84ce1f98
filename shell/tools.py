"""Tools the model can call: a name, a JSON schema, and an async function.

Tool arguments come from the model and are untrusted. `Tool.call` validates them against the
schema and turns every failure into a `ToolResult` with `error` set, never an exception.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from shell.events import Event, ToolCallFinished
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


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    """JSON schema of the arguments object."""
    run: Callable[[dict[str, Any]], Awaitable[ToolResult]] = field(repr=False)

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
    ) -> ToolResult:
        started = timer()
        try:
            arguments = parse_arguments(raw_arguments)
            validate_arguments(arguments, self.parameters)
            result = await self.run(arguments)
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


def validate_arguments(arguments: dict[str, Any], schema: dict[str, Any]) -> None:
    import jsonschema

    try:
        jsonschema.validate(arguments, schema)
    except jsonschema.ValidationError as error:
        where = ".".join(str(p) for p in error.absolute_path)
        raise ToolError(
            f"invalid argument{' ' + where if where else ''}: {error.message}"
        ) from None


class Toolbox:
    """The tools offered to the model for one call."""

    def __init__(
        self, tools: Sequence[Tool] = (), *, timer: Callable[[], float] = time.perf_counter
    ) -> None:
        """`timer`: monotonic seconds, for each call's duration."""
        self._tools = {tool.name: tool for tool in tools}
        self._timer = timer

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def schemas(self, *, compact: bool = False) -> list[dict[str, Any]]:
        return [tool.schema(compact=compact) for tool in self._tools.values()]

    async def call(self, name: str, raw_arguments: str | dict[str, Any] | None) -> ToolResult:
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(self._tools) or "none"
            message = f"there is no tool {name!r} here; you may only call {known}"
            return ToolResult(content=f"Error: {message}", error=message)
        return await tool.call(raw_arguments, self._timer)

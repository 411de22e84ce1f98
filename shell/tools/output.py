"""read_output: the rest of a tool result that was cut to fit the window.

A cut result's marker names this tool (`shell.tools.fitting`), and the workbench offers it from
the first cut on, whatever else is offered: with no project folder, read_file is not there to
read a kept output. Its windows are sized to fit a result's share of the window, so reading on
is never cut again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from shell.tools.project.outputs import PREFIX, OutputStore
from shell.tools.toolbox import CallContext, Tool, ToolResult, json_result
from shell.tools.window import window_arguments, window_payload

DEFAULT_OUTPUT_LINES = 200

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "ref": {
            "type": "string",
            "minLength": 1,
            "maxLength": 300,
            "description": f"{PREFIX}<call id>, as the cut result's marker names it.",
        },
        **window_arguments(DEFAULT_OUTPUT_LINES),
    },
    "required": ["ref"],
    "additionalProperties": False,
}

OUTPUT_DESCRIPTION = (
    "Read on in the whole output of an earlier call whose result was cut to fit the context: "
    "the ref and the line its marker names. Bounded like memory_get: at most `lines` lines "
    "from line `from`; when more remains the result has nextFrom, to continue."
)


def read_output_tool(outputs: OutputStore, max_chars: Callable[[], int]) -> Tool:
    """The read_output tool over `outputs`; `max_chars` is the most text one read returns."""

    async def run(arguments: dict[str, Any], _context: CallContext) -> ToolResult:
        ref = arguments["ref"].strip()
        ref = ref if ref.startswith(PREFIX) else PREFIX + ref
        found = await asyncio.to_thread(
            outputs.read,
            ref,
            int(arguments.get("from", 1)),
            int(arguments.get("lines", DEFAULT_OUTPUT_LINES)),
            max_chars(),
        )
        return json_result(window_payload(ref, found, line_cut=found.cut_line))

    return Tool("read_output", OUTPUT_DESCRIPTION, OUTPUT_SCHEMA, run, source="outputs")

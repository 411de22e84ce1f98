"""A tool result too big for the context is cut before it enters the transcript.

One `cat` of a big file, a long test log or a chatty MCP server must not blow the window: a
result over its share of the window keeps its head and tail (`shell.text.trim_middle`, at line
ends), with a marker between them that says how much was cut and how to read the rest
(`read_output(ref="output:<call id>", from=…)`, from the whole text kept by `OutputStore`; the
workbench offers read_output once a result was cut). A JSON result is cut inside its longest
text (a file's `text`, a command's `output`), so what the model gets is still JSON.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from shell.text import trim_middle
from shell.tools.project.outputs import OutputStore
from shell.tools.toolbox import ToolResult

MIN_CHARS = 1_000
MAX_CHARS = 48_000


def result_budget(window_tokens: int) -> int:
    """The characters one tool result may take: about an eighth of the window (at ~4
    characters a token), within [MIN_CHARS, MAX_CHARS]."""
    return max(MIN_CHARS, min(MAX_CHARS, window_tokens // 2))


def fit_result(result: ToolResult, call_id: str, outputs: OutputStore, budget: int) -> ToolResult:
    """`result`, or `result` cut to about `budget` characters with a marker: a JSON object is
    cut inside its biggest field (a text by lines, a list by items), anything else as text."""
    content = result.content
    if len(content) <= budget:
        return result
    payload = _json_object(content)
    fields = {k: v for k, v in (payload or {}).items() if isinstance(v, str | list)}
    if payload is not None and fields:
        sizes = {k: len(json.dumps(v, ensure_ascii=False)) for k, v in fields.items()}
        key = max(sizes, key=lambda k: sizes[k])
        room = max(MIN_CHARS // 2, sizes[key] - (len(content) - budget))
        value = fields[key]
        payload[key] = (
            cut_text(value, room, call_id, outputs)
            if isinstance(value, str)
            else cut_items(value, room, call_id, outputs)
        )
        cut = json.dumps(payload, ensure_ascii=False)
        if len(cut) <= budget + MIN_CHARS:
            return replace(result, content=cut)
    return replace(result, content=cut_text(content, budget, call_id, outputs))


def cut_items(items: list[Any], budget: int, call_id: str, outputs: OutputStore) -> list[Any]:
    """The first items of `items` that fit `budget` characters as JSON, then a marker item;
    the whole list is kept under the call's id, one item a line."""
    ref = outputs.keep(call_id, "\n".join(json.dumps(i, ensure_ascii=False) for i in items))
    kept: list[Any] = []
    used = 0
    for item in items:
        used += len(json.dumps(item, ensure_ascii=False)) + 2
        if used > budget:
            break
        kept.append(item)
    cut = len(items) - len(kept)
    marker = (
        f"[… {cut:,} more items cut here to fit the context. The whole list is kept: "
        f'read_output(ref="{ref}", from={len(kept) + 1}) reads on, one item a line …]'
    )
    return [*kept, marker]


def cut_text(text: str, budget: int, call_id: str, outputs: OutputStore) -> str:
    """The head and tail of `text`, cut at line ends, with the marker; the whole text is kept
    under the call's id."""
    ref = outputs.keep(call_id, text)

    def marker(head: int, tail: int, total: int) -> str:
        first_cut_line = text.count("\n", 0, head) + 1
        cut_lines = text.count("\n", head, total - tail)
        return (
            ("" if text[:head].endswith("\n") else "\n")
            + f"[… {cut_lines:,} lines ({total - head - tail:,} characters) cut here to fit the "
            f'context. The whole text is kept: read_output(ref="{ref}", from={first_cut_line}) '
            "reads on from the cut …]\n"
        )

    return trim_middle(text, budget, marker, at_lines=True)


def _json_object(content: str) -> dict[str, Any] | None:
    try:
        value = json.loads(content)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None

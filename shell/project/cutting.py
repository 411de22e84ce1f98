"""A tool result too big for the context is cut before it enters the transcript.

One `cat` of a big file, a long test log or a chatty MCP server must not blow the window: a
result over its share of the window keeps its head and tail, with a marker between them that
says how much was cut and how to read the rest (`read_file("output:<call id>", from)`, from the
whole text kept by `OutputStore`). A JSON result is cut inside its longest text (a file's
`text`, a command's `output`), so what the model gets is still JSON.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from shell.project.outputs import OutputStore
from shell.tools import ToolResult

MIN_CHARS = 1_000
MAX_CHARS = 48_000


def result_budget(window_tokens: int) -> int:
    """The characters one tool result may take: about an eighth of the window (at ~4
    characters a token), within [MIN_CHARS, MAX_CHARS]."""
    return max(MIN_CHARS, min(MAX_CHARS, window_tokens // 2))


def fit_result(result: ToolResult, call_id: str, outputs: OutputStore, budget: int) -> ToolResult:
    """`result`, or `result` cut to about `budget` characters with a marker."""
    content = result.content
    if len(content) <= budget:
        return result
    payload = _json_object(content)
    texts = {k: v for k, v in (payload or {}).items() if isinstance(v, str)}
    if payload is None or not texts:
        return replace(result, content=cut_text(content, budget, call_id, outputs))
    key = max(texts, key=lambda k: len(texts[k]))
    room = max(MIN_CHARS // 2, len(texts[key]) - (len(content) - budget))
    payload[key] = cut_text(texts[key], room, call_id, outputs)
    return replace(result, content=json.dumps(payload, ensure_ascii=False))


def cut_text(text: str, budget: int, call_id: str, outputs: OutputStore) -> str:
    """The head (two thirds) and tail of `text`, cut at line ends, with the marker; the whole
    text is kept under the call's id."""
    ref = outputs.keep(call_id, text)
    head_end = text.rfind("\n", 0, budget * 2 // 3) + 1 or budget * 2 // 3
    tail_start = text.find("\n", len(text) - budget // 4) + 1 or len(text) - budget // 4
    tail_start = max(tail_start, head_end)
    first_cut_line = text.count("\n", 0, head_end) + 1
    cut_lines = text.count("\n", head_end, tail_start)
    marker = (
        ("" if text[:head_end].endswith("\n") else "\n")
        + f"[… {cut_lines:,} lines ({tail_start - head_end:,} characters) cut here to fit the "
        f'context. The whole text is kept: read_file(path="{ref}", from={first_cut_line}) '
        "reads on from the cut …]\n"
    )
    return text[:head_end] + marker + text[tail_start:]


def _json_object(content: str) -> dict[str, Any] | None:
    try:
        value = json.loads(content)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None

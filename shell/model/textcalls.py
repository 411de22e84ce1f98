"""Tool calls a model wrote as text, read back as tool calls.

Small local models (Qwen2.5, Hermes, Llama 3.x fine-tunes) behind servers that do not parse
their output (llama-cpp-python with the GGUF's own template, some Ollama and LM Studio set-ups)
answer a tool request with the call in the content: a `<tool_call>{…}</tool_call>` block (the
Hermes/Qwen format; Qwen2.5-Coder-1.5B also writes `<tools>`), a fenced JSON object, a bare
one, or one in doubled braces (`{{…}}`, a Qwen quirk); or, as vLLM's `pythonic` parser reads
Llama 3.2's calls, in Python syntax at the start of the reply: `[memory_search(query="…")]`,
`Memory_append("…", "memory/….md")` (Qwen2.5-Coder-1.5B: the name capitalised, the arguments
positional, in the order of the tool's parameters); or, as llama-cpp-python's
`chatml-function-calling` template teaches, `functions.memory_append:` then the arguments as
JSON, HTML-escaped as that template shows a past call (SmolLM2-135M copies the entities).
`calls_in_text` finds such calls to a tool that was offered and returns the prose before them;
anything else (a JSON object that names no offered tool, a malformed one, an example inside
other prose, a Python call whose arguments are not plain values) stays text.
"""

from __future__ import annotations

import ast
import html
import io
import json
import re
import tokenize
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from shell.model.reply import ModelReply, ToolCallRequest

_TAGGED = re.compile(
    r"<(tool_call|tools|function_call|functioncall)>\s*(.*?)\s*(?:</\1>|\Z)", re.DOTALL
)
_FENCED = re.compile(r"```[ \t]*([\w+-]*)[ \t]*\n(.*?)\n?```", re.DOTALL)
_CALL_FENCES = ("", "json", "tool_call", "tool_code")
"""The fences a call is written in; another (```markdown, ```python) is prose."""
_LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "0.0.0.0", "host.docker.internal")
_PYTHONIC = re.compile(r"\s*\[?\s*([A-Za-z_]\w*)\s*\(")
"""The start of a call in Python syntax, `name(` or `[name(`."""
_PREFIXED = re.compile(r"\s*functions\.([A-Za-z_]\w*)[ \t]*:\s*")
"""The start of a call as `chatml-function-calling` writes it, `functions.NAME:`."""

Offered = Mapping[str, Sequence[str]]
"""The tools offered: each name, and its parameters in order (for positional arguments)."""


def offered_tools(schemas: Sequence[dict[str, Any]]) -> Offered:
    """`Offered` from the OpenAI tool schemas a request sends."""
    offered: dict[str, list[str]] = {}
    for schema in schemas:
        function = schema.get("function", {})
        parameters = function.get("parameters", {}).get("properties", {})
        offered[str(function.get("name", ""))] = list(parameters)
    return offered


@dataclass(frozen=True)
class TextCalls:
    """What a reply's text held: the calls, the text before them, and how much text after them
    was dropped."""

    calls: list[ToolCallRequest]
    prose: str
    dropped: int = 0
    """Characters after the calls, not kept: the model wrote them before any result came back
    (Qwen2.5-Coder-1.5B goes on to recite its prompt's `# Tools` section), as vLLM's Hermes
    parser also drops them."""


def calls_in_text(text: str, offered: Offered, new_id: Callable[[int], str]) -> TextCalls | None:
    """The tool calls written in `text` to tools named in `offered`, or None when it holds
    none (or a block before the first call is not a call to an offered tool: then it is prose
    that shows JSON, and all of it stays prose). The calls are the first one and those right
    after it; the text before them is the prose, the rest is dropped. `new_id(n)` names the
    n-th call found (from 1)."""
    blocks = sorted(_blocks(text, offered), key=lambda block: block[:2])
    calls: list[tuple[str, str]] = []
    start = end = 0
    for begin, finish, call in blocks:
        if begin < end:  # inside the block just read (a fence in a tag)
            continue
        if calls and text[end:begin].strip():
            break
        if call is None:
            if calls:
                break
            return None
        if not calls:
            start = begin
        calls.append(call)
        end = finish
    if not calls:
        return None
    dropped = len(text[end:].strip())
    return TextCalls(_named(calls, new_id), text[:start].strip(), dropped)


def _blocks(text: str, offered: Offered) -> Iterator[tuple[int, int, tuple[str, str] | None]]:
    """(start, end, call or None) of each tagged or fenced block, of the bare JSON objects the
    text opens with (one after another), and of the Python or `functions.NAME:` calls it opens
    with."""
    yield from _pythonic_calls(text, offered)
    yield from _prefixed_calls(text, offered)
    for block in _TAGGED.finditer(text):
        yield block.start(), block.end(), _call(block.group(2), offered)
    for block in _FENCED.finditer(text):
        if block.group(1).lower() in _CALL_FENCES:
            yield block.start(), block.end(), _call(block.group(2), offered)
    at = len(text) - len(text.lstrip())
    while text.startswith("{", at):
        if (bare := _bare(text, at)) is None:
            return
        yield at, bare[0], _call(bare[1], offered)
        at = len(text) - len(text[bare[0] :].lstrip())


def _bare(text: str, at: int) -> tuple[int, str] | None:
    """(end, JSON text) of the object at `at` (in doubled braces too), or None."""
    decoder = json.JSONDecoder()
    for doubled in (False, True):
        begin = at + doubled
        try:
            _value, end = decoder.raw_decode(text, begin)
        except json.JSONDecodeError:
            continue
        if not doubled:
            return end, text[begin:end]
        closing = len(text) - len(text[end:].lstrip())
        if text.startswith("}", closing):
            return closing + 1, text[begin:end]
    return None


def reads_text_calls(setting: str, api_base: str | None) -> bool:
    """Whether calls written as text are read, by the `text_tool_calls` setting (auto: for a
    local `api_base`)."""
    return setting == "on" or (setting == "auto" and is_local(api_base))


def assists(setting: str, api_base: str | None) -> bool:
    """Whether Cairn makes the memory calls a small model does not (`shell.loop.assist`), by
    the `memory_assist` setting (auto: for a local `api_base`, as `reads_text_calls`)."""
    return setting == "on" or (setting == "auto" and is_local(api_base))


def with_text_calls(
    reply: ModelReply, offered: Offered, new_id: Callable[[int], str]
) -> tuple[ModelReply, int] | None:
    """`reply` with the calls its text holds as its tool calls and the prose before them as
    its text, and how many characters after them were dropped; None when it has real tool
    calls or its text holds none."""
    if reply.tool_calls or not reply.text:
        return None
    found = calls_in_text(reply.text, offered, new_id)
    if found is None:
        return None
    read = replace(reply, text=found.prose, tool_calls=found.calls, finish_reason="tool_calls")
    return read, found.dropped


def is_local(api_base: str | None) -> bool:
    """Whether `api_base` is a server on this machine or a private network, where the models
    that write their calls as text are served."""
    if not api_base:
        return False
    host = (urlsplit(api_base).hostname or "").lower()
    if host in _LOCAL_HOSTS or host.endswith(".local") or host.startswith("127."):
        return True
    return bool(re.match(r"^(10|192\.168|172\.(1[6-9]|2\d|3[01]))\.", host))


def _call(block: str, offered: Offered) -> tuple[str, str] | None:
    """(name, arguments JSON) of one written call, or None when it is not one."""
    value = _json_object(block)
    if value is None:
        return None
    if isinstance(value.get("function"), dict):  # {"type": "function", "function": {…}}
        value = value["function"]
    name = value.get("name")
    arguments = value.get("arguments", value.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return None
    allowed = {"name", "arguments", "parameters", "type", "id"}
    if not isinstance(name, str) or name not in offered or not isinstance(arguments, dict):
        return None
    if set(value) - allowed:  # more than a call: an object the prose is showing
        return None
    return name, json.dumps(arguments, ensure_ascii=False)


def _pythonic_calls(
    text: str, offered: Offered
) -> Iterator[tuple[int, int, tuple[str, str] | None]]:
    """The calls in Python syntax the text opens with, one after another (in a list or not),
    each only when it names an offered tool (any case) and its arguments are plain values."""
    at = 0
    while (start := _PYTHONIC.match(text, at)) is not None:
        name = next((tool for tool in offered if tool.lower() == start.group(1).lower()), None)
        end = _call_end(text, start.end() - 1)
        if name is None or end is None:
            return
        arguments = _python_arguments(text[start.start(1) : end], offered[name])
        if arguments is None:
            return
        closing = re.match(r"\s*[\],]?", text[end:])
        end += closing.end() if closing else 0
        yield start.start(), end, (name, arguments)
        at = end


def _prefixed_calls(
    text: str, offered: Offered
) -> Iterator[tuple[int, int, tuple[str, str] | None]]:
    """The `functions.NAME:` calls the text opens with, each followed by its arguments as a
    JSON object, HTML-escaped or not: the form llama-cpp-python's `chatml-function-calling`
    template teaches, and escapes (`{&#34;text&#34;: …}`) when it shows a past call."""
    at = 0
    while (start := _PREFIXED.match(text, at)) is not None:
        name = start.group(1)
        found = _escaped_object(text, start.end())
        if name not in offered or found is None:
            yield start.start(), start.end(), None  # the form, but not a call: all stays prose
            return
        end, arguments = found
        yield start.start(), end, (name, json.dumps(arguments, ensure_ascii=False))
        at = end


def _escaped_object(text: str, at: int) -> tuple[int, dict[str, Any]] | None:
    """(end, value) of the JSON object that opens at `at`, read as it is or HTML-unescaped
    (the shortest that parses); None when there is none."""
    if not text.startswith("{", at):
        return None
    closing = at
    for _ in range(64):  # a call's arguments close within a few dozen braces
        closing = text.find("}", closing + 1)
        if closing < 0:
            return None
        candidate = text[at : closing + 1]
        for form in (candidate, html.unescape(candidate)):
            try:
                value = json.loads(form)
            except json.JSONDecodeError:
                continue
            return (closing + 1, value) if isinstance(value, dict) else None
    return None


def _call_end(text: str, opening: int) -> int | None:
    """The offset just after the `)` that closes the `(` at `opening` (strings skipped)."""
    depth = 0
    lines = text[opening:].splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    try:
        for token in tokenize.generate_tokens(io.StringIO(text[opening:]).readline):
            if token.type != tokenize.OP or token.string not in "()":
                continue
            depth += 1 if token.string == "(" else -1
            if depth == 0:
                row, column = token.end
                return opening + starts[row - 1] + column
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    return None


def _python_arguments(call: str, parameters: Sequence[str]) -> str | None:
    """The arguments of `name(…)` as a JSON object, positional ones named in the order of
    `parameters`; None when any is not a plain value (a name, an expression, a call)."""
    try:
        tree = ast.parse(call.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(tree, ast.Call) or len(tree.args) > len(parameters):
        return None
    try:
        named = zip(parameters, tree.args, strict=False)  # fewer positional than parameters
        arguments = {name: ast.literal_eval(value) for name, value in named}
        for keyword in tree.keywords:
            if keyword.arg is None:
                return None
            arguments[keyword.arg] = ast.literal_eval(keyword.value)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return None
    return json.dumps(arguments, ensure_ascii=False)


def _json_object(block: str) -> dict[str, Any] | None:
    for candidate in (block, _undoubled(block)):
        if candidate is None:
            continue
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _undoubled(block: str) -> str | None:
    """`{{"name": …}}` as `{"name": …}` (braces doubled as in a template's escaping)."""
    if block.startswith("{{") and block.endswith("}}"):
        return block[1:-1]
    return None


def _named(calls: list[tuple[str, str]], new_id: Callable[[int], str]) -> list[ToolCallRequest]:
    return [
        ToolCallRequest(id=new_id(n), name=name, arguments=arguments, from_text=True)
        for n, (name, arguments) in enumerate(calls, start=1)
    ]

"""Tool calls a model wrote as text, read back as tool calls.

Small local models (Qwen2.5, Hermes, Llama 3.x fine-tunes) behind servers that do not parse
their output (llama-cpp-python with the GGUF's own template, some Ollama and LM Studio set-ups)
answer a tool request with the call in the content: a `<tool_call>{…}</tool_call>` block (the
Hermes/Qwen format; Qwen2.5-Coder-1.5B also writes `<tools>`), a fenced JSON object, a bare
one, or one in doubled braces (`{{…}}`, a Qwen quirk). `calls_in_text` finds such calls to a
tool that was offered and returns the prose around them; anything else (a JSON object that
names no offered tool, a malformed one, an example inside other prose) stays text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from shell.model.reply import ToolCallRequest

_TAGGED = re.compile(
    r"<(tool_call|tools|function_call|functioncall)>\s*(.*?)\s*(?:</\1>|\Z)", re.DOTALL
)
_FENCED = re.compile(r"```[ \t]*(?:json|tool_call|tool_code)?[ \t]*\n(.*?)\n?```", re.DOTALL)
_LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "0.0.0.0", "host.docker.internal")


@dataclass(frozen=True)
class TextCalls:
    """What a reply's text held: the calls, and the text without them."""

    calls: list[ToolCallRequest]
    prose: str


def calls_in_text(
    text: str, offered: Collection[str], new_id: Callable[[int], str]
) -> TextCalls | None:
    """The tool calls written in `text` to tools named in `offered`, or None when it holds
    none (or any block in it is not a call to an offered tool: then it is prose that shows
    JSON, and all of it stays prose). `new_id(n)` names the n-th call found (from 1)."""
    for pattern in (_TAGGED, _FENCED):
        blocks = list(pattern.finditer(text))
        if blocks:
            found = [_call(block.group(block.lastindex or 1), offered) for block in blocks]
            if any(call is None for call in found):
                return None
            calls = [c for c in found if c is not None]
            prose = pattern.sub("", text).strip()
            return TextCalls(_named(calls, new_id), prose)
    if (call := _call(text.strip(), offered)) is not None:
        return TextCalls(_named([call], new_id), "")
    return None


def is_local(api_base: str | None) -> bool:
    """Whether `api_base` is a server on this machine or a private network, where the models
    that write their calls as text are served."""
    if not api_base:
        return False
    host = (urlsplit(api_base).hostname or "").lower()
    if host in _LOCAL_HOSTS or host.endswith(".local") or host.startswith("127."):
        return True
    return bool(re.match(r"^(10|192\.168|172\.(1[6-9]|2\d|3[01]))\.", host))


def _call(block: str, offered: Collection[str]) -> tuple[str, str] | None:
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

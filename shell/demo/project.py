"""The demo brain at work on a project: the loop of tools and memory, offline.

    "read README.md and remember how to run the tests"
        read_file → the first test command in it → memory_append, citing README.md#Lx
    "run the tests"
        memory_search → the command memory holds → run_command (which the user approves)
    'replace "OLD" with "NEW" in FILE'
        read_file → edit_file (which the user approves, seeing the diff)
    "list the files", "grep PATTERN", "show me FILE"
        list_files, grep, read_file, and a short account of what came back
    "call TOOL with key=value …" (or a JSON object)
        any tool offered, an MCP server's included, and what it returned

A question ("how do I run the tests here?") is the rules' ordinary recall, with a citation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from shell.demo.messages import DemoReply, PlannedCall, ToolOutcome

_READ_AND_REMEMBER = re.compile(
    r"\bread\s+(?:the\s+)?(?P<path>[\w./-]+)\b.*\bremember\b.*\btests?\b", re.IGNORECASE
)
_RUN_TESTS = re.compile(r"^\W*(?:please\s+)?run\s+(?:the\s+)?tests?\W*$", re.IGNORECASE)
_LIST = re.compile(r"^\W*(?:please\s+)?list\s+(?:the\s+|all\s+)?files\b", re.IGNORECASE)
_GREP = re.compile(r"^\W*(?:please\s+)?(?:grep|search the code)\s+(?:for\s+)?(?P<pattern>.+)$")
_SHOW = re.compile(r"^\W*(?:please\s+)?(?:show me|read|open)\s+(?P<path>[\w./-]+)\W*$")
_REPLACE = re.compile(
    r'^\W*(?:please\s+)?(?:replace|change)\s+"(?P<old>[^"]+)"\s+(?:with|to)\s+"(?P<new>[^"]*)"'
    r"\s+in\s+(?P<path>[\w./-]+)\W*$",
    re.IGNORECASE,
)
_CALL = re.compile(r"^\W*call\s+(?P<tool>[\w-]+)(?:\s+with\s+(?P<arguments>.+))?$", re.I)
_PAIR = re.compile(r"(\w+)\s*=\s*(\"[^\"]*\"|\S+)")
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_BACKTICKS = re.compile(r"`+")
_TEST_WORD = re.compile(r"\b(?:py)?tests?\b|\btox\b|\bnox\b", re.IGNORECASE)
_MAKE_TARGET = re.compile(r"^(tests?)\s*:")
_COMMAND_START = re.compile(r"^(?:\$\s*)?[a-z][\w.-]*(?:\s|$)")


def _call(name: str, **arguments: Any) -> DemoReply:
    return DemoReply(tool_calls=(PlannedCall(name, arguments),))


def is_project_request(text: str) -> bool:
    """Whether `text` asks for work on the project (an order, not a fact to keep)."""
    patterns = (_READ_AND_REMEMBER, _REPLACE, _RUN_TESTS, _LIST, _GREP, _SHOW, _CALL)
    return any(pattern.search(text) for pattern in patterns)


def project_turn(text: str, names: set[str]) -> DemoReply | None:
    """The first call of a project request, or None when `text` is none (or its tool is not
    offered: no project folder)."""
    if (match := _CALL.match(text.strip())) and match.group("tool") in names:
        return _call(match.group("tool"), **_arguments(match.group("arguments") or ""))
    if (match := _READ_AND_REMEMBER.search(text)) and "read_file" in names:
        return _call("read_file", path=match.group("path"), lines=400)
    if (match := _REPLACE.match(text)) and "read_file" in names:
        return _call("read_file", path=match.group("path"))
    if _RUN_TESTS.match(text) and "run_command" in names:
        if "memory_search" in names:
            return _call("memory_search", query="how to run the tests")
        return DemoReply(text="I don't know how to run the tests here: no memory to look in.")
    if _LIST.match(text) and "list_files" in names:
        return _call("list_files")
    if (match := _GREP.match(text)) and "grep" in names:
        return _call("grep", pattern=match.group("pattern").strip().strip("\"'"))
    if (match := _SHOW.match(text)) and "read_file" in names:
        return _call("read_file", path=match.group("path"))
    return None


def after_project_tools(prompt: str, results: Sequence[ToolOutcome]) -> DemoReply | None:
    """The next step after this round's results, or None when they are not the project's."""
    last = results[-1] if results else None
    if last is None:
        return None
    if last.error is not None and (last.name in _PROJECT_TOOLS or _CALL.match(prompt)):
        return DemoReply(text=f"{last.name} did not run: {_sentence(last.error)}")
    if _CALL.match(prompt) and last.name not in _PROJECT_TOOLS:
        return DemoReply(text=f"{last.name} returned:\n\n{fenced(last.content[:600])}")
    payload = last.payload()
    match last.name:
        case "read_file" if _READ_AND_REMEMBER.search(prompt):
            return _remember_test_command(payload)
        case "read_file" if match := _REPLACE.match(prompt):
            old, new = match.group("old"), match.group("new")
            return _call("edit_file", path=payload.get("path"), old=old, new=new)
        case "memory_search" if _RUN_TESTS.match(prompt):
            command = next(_test_commands(_snippets(payload)), None)
            if command is None:
                return DemoReply(
                    text="Memory holds no test command for this project yet. Ask me to "
                    '"read README.md and remember how to run the tests" first.'
                )
            return _call("run_command", command=command)
        case "run_command":
            return DemoReply(text=_command_report(payload))
        case "list_files":
            files = payload.get("files") or []
            shown = ", ".join(inline_code(str(f)) for f in files[:8])
            more = f" and {len(files) - 8} more" if len(files) > 8 else ""
            return DemoReply(text=f"{payload.get('total', len(files))} files: {shown}{more}.")
        case "grep":
            found = str(payload.get("text", "")).splitlines()
            lines = fenced("\n".join(found[:8]))
            return DemoReply(text=f"{payload.get('matchingLines', 0)} matching lines.\n\n{lines}")
        case "read_file":
            text = str(payload.get("text", ""))
            head = "\n".join(text.splitlines()[:12])
            return DemoReply(
                text=f"{inline_code(str(payload.get('path')))}, from line "
                f"{payload.get('from')}:\n\n{fenced(head)}"
            )
        case "edit_file" | "write_file":
            return DemoReply(
                text=f"Changed {inline_code(str(payload.get('path')))} (+{payload.get('added')} "
                f"−{payload.get('removed')})."
            )
    return None


_PROJECT_TOOLS = {"read_file", "list_files", "grep", "edit_file", "write_file", "run_command"}


def _remember_test_command(payload: dict[str, Any]) -> DemoReply:
    path = str(payload.get("path", "the file"))
    start = payload.get("from")
    first = start if isinstance(start, int) else 1
    lines = str(payload.get("text", "")).splitlines()
    for offset, line in enumerate(lines):
        target = _MAKE_TARGET.match(line) if path.endswith("Makefile") else None
        if command := f"make {target.group(1)}" if target else next(_test_commands([line]), None):
            note = f"- tests: run them with `{command}` (source: {path}#L{first + offset})"
            return _call("memory_append", text=note)
    return DemoReply(text=f"I read {path} but found no command there that runs the tests.")


def _test_commands(texts: Sequence[str] | Iterator[str]) -> Iterator[str]:
    """Commands in inline code (`make test`) that run tests, in order."""
    for text in texts:
        for code in _INLINE_CODE.findall(text):
            code = code.strip().removeprefix("$ ").strip()
            if _TEST_WORD.search(code) and _COMMAND_START.match(code):
                yield code


def _snippets(payload: dict[str, Any]) -> Iterator[str]:
    for hit in payload.get("results") or payload.get("hits") or ():
        if isinstance(hit, dict):
            yield str(hit.get("snippet") or "")


def _command_report(payload: dict[str, Any]) -> str:
    command, code, ended = payload.get("command"), payload.get("exitCode"), payload.get("ended")
    output = str(payload.get("output", "")).rstrip().splitlines()
    tail = "\n".join(output[-6:])
    if ended == "timeout":
        verdict = "was killed at its timeout"
    elif ended == "cancelled":
        verdict = "was stopped"
    else:
        verdict = "passed" if code == 0 else f"failed with exit code {code}"
    said = f"{inline_code(str(command))} {verdict}."
    return f"{said}\n\n{fenced(tail)}" if tail else said


def inline_code(text: str) -> str:
    """`text` as inline code, whatever backticks it holds (a path, a command)."""
    ticks = "`" * (max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def fenced(text: str) -> str:
    """`text` (a tool's output, a file's lines) as a code block, shown as it is: the model's
    Markdown would otherwise bold `__init__`, drop `<file>` and join its lines."""
    fence = "`" * max(3, max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)
    return f"{fence}\n{text}\n{fence}"


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if text.endswith((".", "!", "?")) else text + "."


def _arguments(text: str) -> dict[str, Any]:
    """`key=value` pairs ("timezone=UTC", quoted values kept whole), or a JSON object."""
    try:
        value = json.loads(text)
    except ValueError:
        return {key: raw.strip('"') for key, raw in _PAIR.findall(text)}
    return value if isinstance(value, dict) else {}

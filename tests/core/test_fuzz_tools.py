"""Fuzzed tool arguments (hypothesis): every call returns a tool result, never raises, and
nothing is written outside the workspace's memory files. Real tools, real git, real index."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from shell.build import build_agent
from shell.config import Settings
from shell.tools.toolbox import Toolbox
from shell.workspace import init_workspace

HOSTILE_PATHS = [
    "../outside.md",
    "memory/../../outside.md",
    "/etc/passwd",
    "/tmp/outside.md",
    "~/outside.md",
    "memory/escape/x.md",  # a symlink to outside the workspace (set up below)
    "memory/link.md",  # a symlinked file to outside
    "ｍemory/x.md",  # fullwidth m
    "memory∕x.md",  # division slash U+2215
    "MEMORY.md\u200b",  # zero-width space
    "MEMORY.md\x00",
    "memory/x\x00.md",
    "AGENTS.md",
    ".git/config",
    "memory/" + "a" * 5_000 + ".md",
    "",
    "memory/",
    "MEMORY.md",
    "memory/2026-12-01.md",
]
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=60),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)
ARGUMENT_NAMES = st.sampled_from(
    ["path", "text", "content", "from", "lines", "query", "maxResults", "minScore", "x"]
)
ARGUMENTS = st.dictionaries(
    ARGUMENT_NAMES,
    JSON_VALUES
    | st.sampled_from(HOSTILE_PATHS)
    | st.integers(min_value=30_000, max_value=200_000).map(lambda n: "- fact\n" * n),  # huge
    max_size=4,
)
VALID_PATHS = st.sampled_from(["MEMORY.md", "memory/2026-12-01.md", "memory/notes/x.md"])
PATHS = VALID_PATHS | st.sampled_from(HOSTILE_PATHS) | st.text(max_size=30)
TEXTS = st.one_of(*[st.text(min_size=1, max_size=300)] * 3, JSON_VALUES)
NUMBERS = st.integers(min_value=1, max_value=500) | st.integers() | JSON_VALUES
SHAPED = {  # each tool's own fields, hostile values: most calls get past the JSON shape
    "memory_get": st.fixed_dictionaries(
        {"path": PATHS}, optional={"from": NUMBERS, "lines": NUMBERS}
    ),
    "memory_append": st.fixed_dictionaries({"text": TEXTS}, optional={"path": PATHS}),
    "memory_write": st.fixed_dictionaries({"path": PATHS, "content": TEXTS}),
    "memory_search": st.fixed_dictionaries(
        {"query": TEXTS}, optional={"maxResults": NUMBERS, "minScore": NUMBERS}
    ),
}
CALLS = st.sampled_from([*sorted(SHAPED), "no_such_tool"]).flatmap(
    lambda name: st.tuples(
        st.just(name),
        st.one_of(*[SHAPED[name]] * 4, ARGUMENTS)  # 4 in 5 shaped
        if name in SHAPED
        else ARGUMENTS,
    )
)


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Toolbox, Path, Path]]:
    base = tmp_path_factory.mktemp("fuzz")
    outside = base / "outside"
    outside.mkdir()
    (outside / "target.md").write_text("outside\n")
    workspace = base / "ws"
    settings = Settings(workspace=workspace, embedder="hash", watch=False)
    init_workspace(settings)
    (workspace / "memory" / "escape").symlink_to(outside, target_is_directory=True)
    (workspace / "memory" / "link.md").symlink_to(outside / "target.md")
    agent = build_agent(settings, index_in_background=False)
    yield agent.toolbox, workspace, outside
    asyncio.run(agent.aclose())


def _snapshot(folder: Path) -> dict[str, bytes]:
    found = {}
    for root, _, names in os.walk(folder):
        for name in names:
            path = Path(root, name)
            if not path.is_symlink():
                found[str(path.relative_to(folder))] = path.read_bytes()
    return found


def _raw(arguments: dict[str, Any], form: str) -> str | dict[str, Any]:
    """The arguments as the model may send them: parsed, JSON text, or JSON cut short."""
    if form == "dict":
        return arguments
    text = json.dumps(arguments, allow_nan=True)
    return text if form == "json" else text[: len(text) // 2]


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(call=CALLS, form=st.sampled_from(["dict", "dict", "json", "json", "cut"]))
def test_any_arguments_get_a_tool_result_and_stay_inside_the_workspace(
    sandbox: tuple[Toolbox, Path, Path], call: tuple[str, dict[str, Any]], form: str
) -> None:
    toolbox, workspace, outside = sandbox
    name, arguments = call
    before_outside = _snapshot(outside)
    before = _snapshot(workspace)

    result = asyncio.run(toolbox.call(name, _raw(arguments, form)))
    event(f"{name}: {'refused' if result.error else 'done'}")

    assert isinstance(result.content, str) and result.content
    if result.error is not None:
        assert result.content.startswith("Error: ") and "\n" not in result.error[:200]
    assert _snapshot(outside) == before_outside
    changed = {
        path
        for path, data in _snapshot(workspace).items()
        if before.get(path) != data and not path.startswith((".git/", ".cairn/"))
    }
    assert all(path == "MEMORY.md" or path.startswith("memory/") for path in changed), changed

"""The demo brain at work on a project folder: list, grep, show, edit after approval."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace
from pathlib import Path

import pytest

from shell.agent import Agent
from shell.build import build_agent
from shell.config import Settings, ToolSettings
from shell.events import (
    ApprovalRequested,
    AssistantMessage,
    Event,
    FileEdited,
    MemoryWritten,
    Notice,
)
from shell.memory.citations import refs
from shell.scopes.scopes import session_scopes


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "calc"
    (folder / "calc").mkdir(parents=True)
    (folder / "calc" / "ops.py").write_text("def add(a, b):\n    return a - b\n")
    (folder / "README.md").write_text("# calc\n\nAdds numbers.\n")
    (folder / ".gitignore").write_text("build/\n")
    (folder / "build").mkdir()
    (folder / "build" / "ops.py").write_text("def add(a, b): ...\n")
    return folder


@pytest.fixture
def agent(demo_settings: Settings, project: Path) -> Agent:
    return build_agent(replace(demo_settings, project=project), index_in_background=False)


async def turn(agent: Agent, text: str, answer: str | None = None) -> list[Event]:
    """One turn; an approval it asks for is answered with `answer`."""
    seen: list[Event] = []
    async with contextlib.aclosing(agent.submit(text)) as events:
        async for event in events:
            seen.append(event)
            if isinstance(event, ApprovalRequested) and answer is not None:
                asyncio.get_running_loop().call_soon(
                    agent.answer_approval, event.call_id, answer, "not now"
                )
    return seen


def said(events: list[Event]) -> str:
    return [e for e in events if isinstance(e, AssistantMessage)][-1].text


async def test_list_grep_and_show_answer_from_the_project(agent: Agent) -> None:
    listed = said(await turn(agent, "list the files"))
    assert listed.startswith("3 files:") and "calc/ops.py" in listed and "build" not in listed
    found = said(await turn(agent, "grep return a"))
    assert "calc/ops.py:2:    return a - b" in found
    shown = said(await turn(agent, "show me README.md"))
    assert "# calc" in shown


async def test_an_edit_waits_for_approval_and_shows_its_diff(agent: Agent, project: Path) -> None:
    events = await turn(agent, 'replace "a - b" with "a + b" in calc/ops.py', "allow_once")
    [asked] = [e for e in events if isinstance(e, ApprovalRequested)]
    assert asked.diff and "-    return a - b" in asked.diff and "+    return a + b" in asked.diff
    assert [e.path for e in events if isinstance(e, FileEdited)] == ["calc/ops.py"]
    assert (project / "calc" / "ops.py").read_text().endswith("return a + b\n")
    assert said(events) == "Changed `calc/ops.py` (+1 −1)."


async def test_a_denied_edit_changes_nothing_and_says_why(agent: Agent, project: Path) -> None:
    events = await turn(agent, 'replace "a - b" with "a * b" in calc/ops.py', "deny")
    assert (project / "calc" / "ops.py").read_text().endswith("return a - b\n")
    assert said(events) == "edit_file did not run: The user denied edit_file: not now."


async def test_below_4k_tokens_project_tools_wait_to_be_asked_for(
    demo_settings: Settings, project: Path
) -> None:
    small = replace(demo_settings, project=project, context_window=2_048)
    agent = build_agent(small, index_in_background=False)
    started = [event async for event in agent.start()]
    assert "read_file" not in {tool.name for tool in agent.toolbox}
    assert "## Project" not in agent.request_builder.system_prompt()  # no rules for no tools
    assert any(
        isinstance(e, Notice) and e.message.startswith("Project tools are off: at a 2,048")
        for e in started
    )
    asked = build_agent(replace(small, tools=ToolSettings(project="on")))
    assert "read_file" in {tool.name for tool in asked.toolbox}
    assert f"project folder {project}" in asked.request_builder.system_prompt()


async def test_a_makefile_test_target_is_remembered_with_its_line(
    agent: Agent, project: Path, demo_settings: Settings
) -> None:
    (project / "Makefile").write_text("check:\n\tflake8 .\n\ntest:\n\tpython3 -m unittest\n")
    events = await turn(agent, "read Makefile and remember how to run the tests")
    [written] = [e for e in events if isinstance(e, MemoryWritten)]
    project_memory = session_scopes(agent.settings).own
    assert written.scope == project_memory.label == "project:calc"  # a project fact
    note = (project_memory.workspace / written.path).read_text()
    hashed = refs.digest(["test:"])  # the door records what line 4 said when written
    assert f"- tests: run them with `make test` (source: Makefile#L4@{hashed})" in note
    assert not (demo_settings.workspace / written.path).exists()
    flushed = await turn(agent, "/flush")
    assert not [e for e in flushed if isinstance(e, MemoryWritten)]  # an order is no fact


async def test_a_recalled_line_whose_makefile_changed_is_answered_with_a_warning(
    agent: Agent, project: Path
) -> None:
    (project / "Makefile").write_text("check:\n\tflake8 .\n\ntest:\n\tpython3 -m unittest\n")
    await turn(agent, "read Makefile and remember how to run the tests")
    asked = await turn(agent, "how do I run the tests?")
    assert "has changed" not in [e for e in asked if isinstance(e, AssistantMessage)][-1].text
    (project / "Makefile").write_text("# lint first\ncheck:\n\tflake8 .\ntests:\n\tpytest\n")
    asked = await turn(agent, "how do I run the tests?")
    answer = [e for e in asked if isinstance(e, AssistantMessage)][-1].text
    assert answer.endswith(
        "But the code it cites has changed: [stale: Makefile#L4 changed since this was written]"
    )

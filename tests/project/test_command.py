"""run_command on real processes, unsandboxed: streamed output, exit codes, bounded results, the
process group killed at its timeout and by a cancel, an environment by allow-list. The sandbox's
own tests are in test_sandbox.py."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from shell.config import ToolSettings
from shell.events import Event
from shell.events.tools import CommandFinished, CommandOutput
from shell.tools.project.capture import EMIT_BYTES, HEAD_BYTES, TAIL_BYTES
from shell.tools.project.command import command_tool
from shell.tools.project.environment import command_environment
from shell.tools.project.outputs import OutputStore
from shell.tools.project.root import ProjectRoot
from shell.tools.toolbox import CallContext, Tool, ToolResult

ENVIRON = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder.resolve()


def make_tool(
    project: Path,
    tmp_path: Path,
    environ: dict[str, str] | None = None,
    settings: ToolSettings | None = None,
) -> Tool:
    outputs = OutputStore(tmp_path / "outputs")
    return command_tool(
        ProjectRoot(project), outputs, settings or ToolSettings(), environ or ENVIRON
    )


async def run(
    tool: Tool, command: str, seconds: float = 30, context: CallContext | None = None
) -> tuple[dict[str, Any], ToolResult, list[Event]]:
    events: list[Event] = []
    context = context or CallContext("call-1")
    context.emit = events.append
    result = await tool.call({"command": command, "timeout": seconds}, context=context)
    assert result.error is None, result.error
    return json.loads(result.content), result, events


def streamed(events: list[Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, CommandOutput))


def finished(result: ToolResult) -> CommandFinished:
    (event,) = result.events
    assert isinstance(event, CommandFinished)
    return event


def ended(pid: int) -> bool:
    """Whether `pid` has ended: no such process, or a zombie nobody reaped yet (in a container
    whose init does not reap orphans, a killed orphan stays one)."""
    try:
        os.kill(pid, 0)
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (ProcessLookupError, FileNotFoundError):
        return True
    return stat[stat.rfind(")") + 2 :].startswith("Z")


def listed(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


def pid_in(file: Path) -> int | None:
    text = file.read_text() if file.exists() else ""
    return int(text) if text.strip() else None


async def gone(pid: int) -> bool:
    """Whether `pid` ends within a few seconds (a kill is not instant)."""
    for _ in range(100):
        if ended(pid):
            return True
        await asyncio.sleep(0.05)
    return False


async def written_pid(file: Path) -> int:
    for _ in range(500):
        if (pid := pid_in(file)) is not None:
            return pid
        await asyncio.sleep(0.02)
    raise AssertionError(f"{file} was never written")


async def test_output_streams_in_order_and_the_exit_code_is_a_result(
    project: Path, tmp_path: Path
) -> None:
    tool = make_tool(project, tmp_path)
    script = "for i in 1 2 3 4 5; do echo line $i; sleep 0.15; done; echo oops >&2; exit 3"

    payload, result, events = await run(tool, script)

    expected = "".join(f"line {i}\n" for i in range(1, 6)) + "oops\n"
    assert streamed(events) == expected
    assert sum(isinstance(e, CommandOutput) for e in events) >= 2  # streamed, not at the end
    assert all(e.call_id == "call-1" for e in events if isinstance(e, CommandOutput))
    assert payload["exitCode"] == 3
    assert payload["ended"] == "exited"
    assert payload["output"] == expected
    assert payload["outputBytes"] == len(expected)
    assert "outputRef" not in payload
    event = finished(result)
    assert (event.exit_code, event.ended, event.output_bytes) == (3, "exited", len(expected))
    assert event.output_ref is None


async def test_a_big_output_is_bounded_in_the_result_and_the_card_but_spooled_whole(
    project: Path, tmp_path: Path
) -> None:
    tool = make_tool(project, tmp_path)
    size = 20_000_000
    payload, result, events = await run(tool, f"yes 0123456789abcdef | head -c {size}")

    assert payload["exitCode"] == 0
    assert payload["outputBytes"] == size
    assert payload["outputRef"] == "output:call-1"
    assert len(payload["output"]) < HEAD_BYTES + TAIL_BYTES + 200
    assert payload["output"].startswith("0123456789abcdef\n")
    assert "bytes cut" in payload["output"]
    assert 'read_output(ref="output:call-1")' in payload["output"]
    outputs = [e for e in events if isinstance(e, CommandOutput)]
    assert all(len(e.text) <= EMIT_BYTES + 100 for e in outputs)
    assert sum(len(e.text) for e in outputs) < 1_000_000
    spool = OutputStore(tmp_path / "outputs").find("output:call-1")
    assert spool.stat().st_size == size
    assert finished(result).output_ref == "output:call-1"


async def test_a_timeout_kills_the_command_and_its_children(project: Path, tmp_path: Path) -> None:
    tool = make_tool(project, tmp_path)

    payload, result, _ = await run(tool, "sleep 300 & echo $! > pid; sleep 300", seconds=1)

    assert payload["ended"] == "timeout"
    assert payload["exitCode"] != 0
    assert finished(result).ended == "timeout"
    assert "killed after 1 s" in finished(result).detail
    assert await gone(await written_pid(project / "pid"))


async def test_a_cancel_kills_the_command_and_its_children(project: Path, tmp_path: Path) -> None:
    tool = make_tool(project, tmp_path)
    context = CallContext("call-1")

    async def cancel_once_started() -> None:
        await written_pid(project / "pid")
        context.cancelled.set()

    canceller = asyncio.ensure_future(cancel_once_started())
    payload, result, _ = await run(tool, "sleep 300 & echo $! > pid; sleep 300", 600, context)
    await canceller

    assert payload["ended"] == "cancelled"
    assert finished(result).ended == "cancelled"
    assert await gone(await written_pid(project / "pid"))


async def test_a_child_left_holding_the_output_is_ended_after_the_shell_exits(
    project: Path, tmp_path: Path
) -> None:
    tool = make_tool(project, tmp_path)

    payload, _, _ = await run(tool, "sleep 300 & echo $! > pid; echo done", seconds=600)

    assert payload["ended"] == "exited"
    assert payload["exitCode"] == 0
    assert payload["output"] == "done\n"
    assert await gone(await written_pid(project / "pid"))


async def test_cancelling_the_awaiting_task_kills_and_reaps(project: Path, tmp_path: Path) -> None:
    tool = make_tool(project, tmp_path)
    call = asyncio.ensure_future(tool.call({"command": "echo $$ > pid; sleep 300"}))
    pid = await written_pid(project / "pid")

    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call

    assert await gone(pid)
    assert not listed(pid)  # reaped: not even a zombie of ours


async def test_only_safe_variables_and_passed_ones_reach_the_command(
    project: Path, tmp_path: Path
) -> None:
    environ = ENVIRON | {
        "OPENAI_API_KEY": "sk-openai",
        "FOO_API_KEY": "sk-foo",
        "GITHUB_TOKEN": "ghp-token",
        "PGPASSWORD": "pg-secret",
        "LC_ALL": "C.UTF-8",
        "PLAIN": "not-passed",
    }
    settings = ToolSettings(pass_env=("FOO_API_KEY",))

    payload, _, _ = await run(make_tool(project, tmp_path, environ, settings), "env")

    lines = set(payload["output"].splitlines())
    assert {"FOO_API_KEY=sk-foo", "LC_ALL=C.UTF-8", f"PWD={project}"} <= lines
    assert f"PATH={ENVIRON['PATH']}" in lines
    for value in ("sk-openai", "ghp-token", "pg-secret", "not-passed"):
        assert value not in payload["output"]
    assert {"GIT_TERMINAL_PROMPT=0", "PAGER=cat", "GIT_PAGER=cat"} <= lines


def test_command_environment_is_an_allow_list() -> None:
    environ = {
        name: "x"
        for name in (
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "GITHUB_TOKEN",
            "GH_TOKEN",
            "VAULT_TOKEN",
            "DOCKER_PASSWORD",
            "DATABASE_URL",
            "SSH_AUTH_SOCK",
            "TERM",
            "LC_CTYPE",
            "HOME",
        )
    }
    assert set(command_environment(environ, ("DATABASE_URL",))) == {
        "TERM",
        "LC_CTYPE",
        "HOME",
        "DATABASE_URL",
        "GIT_TERMINAL_PROMPT",
        "PAGER",
        "GIT_PAGER",
    }


async def test_cat_reads_no_stdin_and_the_command_runs_in_the_project(
    project: Path, tmp_path: Path
) -> None:
    tool = make_tool(project, tmp_path)

    payload, _, _ = await run(tool, "cat; pwd", seconds=600)

    assert payload["ended"] == "exited"
    assert payload["output"] == f"{project}\n"


async def test_a_command_that_cannot_start_is_an_error(project: Path, tmp_path: Path) -> None:
    tool = make_tool(project, tmp_path)
    os.rmdir(project)

    result = await tool.call({"command": "true"})

    assert result.error is not None
    assert "could not start" in result.error
    assert finished(result).ended == "failed"


async def test_the_preview_names_the_command_folder_and_timeout(
    project: Path, tmp_path: Path
) -> None:
    tool = make_tool(project, tmp_path)
    assert tool.preview is not None and tool.risk == "execute" and tool.source == "project"

    preview = await tool.preview({"command": "pytest -q", "timeout": 30})

    assert (preview.summary, preview.subject, preview.command) == (
        "run pytest -q",
        "pytest -q",
        "pytest -q",
    )
    assert preview.detail == f"in {project}, timeout 30 s"
    over = await tool.call({"command": "true", "timeout": ToolSettings().max_timeout + 1})
    assert over.error is not None and "timeout" in over.error

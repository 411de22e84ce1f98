"""A read-only workspace (a read-only mount: bubblewrap binds it so, which holds for root too)
is still read and searched, and says it is read-only; `cairn run` answers from it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shell.config import DEMO_MODEL, Settings
from shell.memory.files.door import MemoryFiles
from shell.tools.project.sandbox import Sandbox
from shell.workspace import init_workspace
from tests.conftest import Clock

REPO = Path(__file__).resolve().parents[2]
needs_bwrap = pytest.mark.skipif(
    Sandbox().unavailable() is not None, reason=f"no bubblewrap here: {Sandbox().unavailable()}"
)


def read_only_cairn(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`cairn` with `workspace` mounted read-only and the rest of the machine as it is."""
    code = "import sys; from widgets.cli import main; sys.argv[0] = 'cairn'; main()"
    command = ["bwrap", "--bind", "/", "/", "--ro-bind", str(workspace), str(workspace)]
    command += ["--dev", "/dev", "--proc", "/proc", sys.executable, "-c", code]
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    environment.update(
        PYTHONPATH=str(REPO),
        HOME=str(workspace.parent),
        CAIRN_CONFIG=str(workspace.parent / "none.toml"),
        CAIRN_EMBEDDER="hash",
        CAIRN_WATCH="false",
    )
    return subprocess.run(
        [*command, "--workspace", str(workspace), *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
        check=False,
    )


@pytest.fixture
def noted(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    settings = Settings(workspace=root, model=DEMO_MODEL, embedder="hash", clock=Clock())
    files = MemoryFiles(root, init_workspace(settings))
    files.append(
        "memory/2026-11-30.md", "- The deploy window moved to Thursday evenings", reason="tool"
    )
    return root


@needs_bwrap
def test_a_read_only_workspace_is_searched_and_says_so(noted: Path) -> None:
    done = read_only_cairn(noted, "search", "deploy", "window")
    assert done.returncode == 0, done.stderr
    assert "The workspace is read-only" in done.stdout
    assert "memory/2026-11-30.md#L1" in done.stdout
    assert "nothing relevant" not in done.stdout
    assert not (noted / ".cairn" / "index").exists()


@needs_bwrap
def test_cairn_run_answers_from_a_read_only_workspace(noted: Path) -> None:
    done = read_only_cairn(noted, "--demo", "run", "when does the deploy window happen?")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    notices = [e["message"] for e in events if e["type"] == "notice"]
    assert any("read-only" in n for n in notices)
    (answer,) = [e["text"] for e in events if e["type"] == "assistant_message"]
    assert "Thursday evenings" in answer
    assert events[-1]["type"] == "turn_finished"

"""run_command in the bubblewrap sandbox, on real processes: what a command can see and write,
the network, its limits, and that no process it starts outlives the call, however it tries."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shell.config import Settings, ToolSettings
from shell.tools.project import cgroup
from shell.tools.project import sandbox as sandbox_module
from shell.tools.project.command import command_tool
from shell.tools.project.outputs import OutputStore
from shell.tools.project.root import ProjectRoot
from shell.tools.project.sandbox import MEMORY_LIMIT, Sandbox
from shell.tools.toolbox import CallContext

REPO = Path(__file__).resolve().parents[2]
needs_bwrap = pytest.mark.skipif(
    Sandbox().unavailable() is not None, reason=f"no sandbox here: {Sandbox().unavailable()}"
)


PYTHON = Path(sys.base_prefix, "bin", "python3")
"""The interpreter the sandboxed commands run: the base one, since a venv under /tmp (a clone in
CI) is hidden by the command's private /tmp."""


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    (folder / ".ssh").mkdir(parents=True)
    (folder / ".ssh" / "id_x").write_text("PRIVATE-KEY-MATERIAL\n", encoding="utf-8")
    (folder / ".netrc").write_text("machine example.org password netrc-secret\n")
    return folder.resolve()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder.resolve()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "MEMORY.md").write_text("- the memory\n", encoding="utf-8")
    return folder.resolve()


async def run(
    project: Path,
    command: str,
    *,
    home: Path | None = None,
    hidden: tuple[Path, ...] = (),
    network: bool = False,
    seconds: float = 60,
) -> dict[str, Any]:
    environ = {"PATH": os.environ["PATH"], "HOME": str(home or "/nonexistent")}
    tool = command_tool(
        ProjectRoot(project),
        OutputStore(project.parent / "outputs"),
        ToolSettings(),
        environ,
        sandbox=Sandbox(hidden=hidden, network=network),
    )
    result = await tool.call({"command": command, "timeout": seconds}, context=CallContext("c1"))
    assert result.error is None, result.error
    payload: dict[str, Any] = json.loads(result.content)
    return payload


def absent(path: str) -> bool:
    return not Path(path).exists()


def running_with(marker: str) -> list[int]:
    """The processes (not zombies) whose command line holds `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(int(entry.name))
    return found


def test_the_command_line_binds_hides_and_cuts_the_network(
    project: Path, workspace: Path, home: Path
) -> None:
    hooks = project / ".githooks"
    hooks.mkdir()
    subprocess.run(["git", "-C", str(project), "config", "core.hooksPath", ".githooks"], check=True)
    missing = project.parent / "no-such-folder"

    argv = Sandbox(hidden=(workspace, missing)).argv("make test", project, str(home))

    line = " ".join(argv)
    assert argv[-4:] == ["--", "/bin/sh", "-c", "make test"]
    for flag in ("--unshare-pid", "--die-with-parent", "--unshare-net", "--cap-drop ALL"):
        assert flag in line
    assert "--ro-bind / / --dev /dev --proc /proc --tmpfs /tmp" in line
    assert f"--bind {project} {project}" in line
    assert f"--ro-bind {project}/.git {project}/.git" in line
    assert f"--ro-bind {hooks} {hooks}" in line
    assert f"--tmpfs {workspace}" in line and f"--tmpfs {home}/.ssh" in line
    assert f"--remount-ro {workspace} --remount-ro {home}/.ssh --setenv" in line
    assert f"--ro-bind /dev/null {home}/.netrc" in line
    assert str(missing) not in line and ".aws" not in line  # only what exists
    assert "--unshare-net" not in Sandbox(network=True).argv("true", project, None)
    assert "--tmpfs /run " in line  # its sockets connect even read-only


def test_what_is_shown_again_comes_after_what_hides_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "run" / "systemd" / "resolve").mkdir(parents=True)
    monkeypatch.setattr(sandbox_module, "RUNTIME", tmp_path / "run")
    monkeypatch.setattr(sandbox_module, "SHOWN", (tmp_path / "run" / "systemd" / "resolve",))
    (tmp_path / "project").mkdir()

    line = " ".join(Sandbox().argv("true", tmp_path / "project", None))

    shown = f"--ro-bind {tmp_path}/run/systemd/resolve {tmp_path}/run/systemd/resolve"
    assert line.index(f"--tmpfs {tmp_path}/run ") < line.index(shown)
    assert line.index(shown) < line.index(f"--remount-ro {tmp_path}/run ")


@needs_bwrap
async def test_run_and_its_sockets_are_hidden(project: Path) -> None:
    payload = await run(project, "find /run -mindepth 1 -maxdepth 2")

    assert set(payload["output"].split()) <= {"/run/systemd", "/run/systemd/resolve"}


def test_a_hidden_folder_around_the_project_is_hidden_before_the_project_is_bound(
    tmp_path: Path,
) -> None:
    around = tmp_path / "around"
    inner = around / "project"
    (inner / "sub").mkdir(parents=True)

    argv = Sandbox(hidden=(around, inner / "sub")).argv("true", inner, None)

    bind = argv.index("--bind")
    assert argv.index(str(around)) < bind < argv.index(str(inner / "sub"))


def test_settings_hide_the_workspace_and_the_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "etc" / "cairn.toml"
    settings = Settings(workspace=tmp_path / "ws", tools=ToolSettings(network=True))

    named = Sandbox.for_settings(settings, {"CAIRN_CONFIG": str(config)})
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    platform = Sandbox.for_settings(settings, {})

    ws = tmp_path / "ws"
    assert named.hidden == (
        ws,
        ws / ".cairn",
        config,
        config.parent / "state.toml",
        config.parent / "themes",
    )
    assert config.parent not in named.hidden  # /etc, or a home folder: not Cairn's to hide
    assert platform.hidden == (ws, ws / ".cairn", tmp_path / "xdg" / "cairn")
    assert named.network and named.mode == "auto"


def test_where_the_sandbox_cannot_work_it_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Sandbox(mode="off").unavailable() == 'the [tools] sandbox setting is "off"'
    assert Sandbox(mode="off").describe().startswith("unsandboxed: ")
    assert not Sandbox(mode="off").active
    monkeypatch.setattr(sandbox_module.shutil, "which", lambda _: None)
    assert Sandbox().unavailable() == "bubblewrap (bwrap) is not installed"
    monkeypatch.setattr(sandbox_module.sys, "platform", "darwin")
    assert Sandbox().unavailable() == "the sandbox needs Linux (this is darwin)"


def test_a_failing_probe_is_the_reason(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n"
    )
    fake.chmod(0o755)

    reason = sandbox_module.probe(str(fake), network=False)

    assert reason == "bwrap fails here: bwrap: No permissions to creating new namespace"


ESCAPES = {
    "setsid": "setsid sleep {m} > /dev/null 2>&1 &",
    "double fork": "( (sleep {m} &) & )",
    "nohup": "nohup sleep {m} > /dev/null 2>&1 &",
    "disown": "bash -c 'sleep {m} > /dev/null 2>&1 & disown'",
    "python daemon": (
        "python3 -c 'import os, sys, time; os.fork() and sys.exit(); os.setsid(); "
        "os.fork() and sys.exit(); os.close(1); os.close(2); time.sleep({m})'"
    ),
    "background job": "sleep {m} &",
}
"""Ways a command leaves a process behind when its shell exits."""


@needs_bwrap
@pytest.mark.parametrize("escape", ESCAPES)
async def test_no_process_outlives_a_command_that_exited(project: Path, escape: str) -> None:
    marker = f"{secrets.randbelow(10**6) + 10**6}.{secrets.randbelow(10**6)}"

    payload = await run(project, ESCAPES[escape].format(m=marker) + "\necho left")

    assert payload["ended"] == "exited" and payload["output"].endswith("left\n")
    assert running_with(marker) == []


@needs_bwrap
@pytest.mark.parametrize(
    "command",
    [
        "sh -c 'trap \"\" TERM HUP; sleep {m}'",
        "setsid sh -c 'trap \"\" TERM; sleep {m}' & sleep {m}",
    ],
    ids=["ignores TERM", "setsid and ignores TERM"],
)
async def test_no_process_outlives_a_command_killed_at_its_timeout(
    project: Path, command: str
) -> None:
    marker = f"{secrets.randbelow(10**6) + 10**6}.{secrets.randbelow(10**6)}"

    payload = await run(project, command.format(m=marker), seconds=1)

    assert payload["ended"] == "timeout"
    assert running_with(marker) == []


@needs_bwrap
async def test_the_project_is_writable_and_git_read_only(project: Path) -> None:
    config = (project / ".git" / "config").read_bytes()

    payload = await run(
        project, "echo made > made.txt && echo x >> .git/config; echo h > .git/hooks/pre-commit"
    )

    assert (project / "made.txt").read_text() == "made\n"
    assert (project / ".git" / "config").read_bytes() == config
    assert not (project / ".git" / "hooks" / "pre-commit").exists()
    assert payload["output"].count("Read-only file system") == 2


@needs_bwrap
async def test_hidden_folders_are_empty_and_stay_unchanged(
    project: Path, workspace: Path, home: Path
) -> None:
    command = (
        f"cat ~/.ssh/id_x ~/.netrc; ls -A {workspace} | wc -l; "
        f"echo pwned > {workspace}/MEMORY.md; echo out > /etc/cairn-sandbox-test; "
        "echo private > /tmp/cairn-sandbox-test && cat /tmp/cairn-sandbox-test"
    )

    payload = await run(project, command, home=home, hidden=(workspace,))

    output = payload["output"]
    assert "PRIVATE-KEY-MATERIAL" not in output and "netrc-secret" not in output
    assert "\n0\n" in output  # the workspace is an empty folder
    assert (workspace / "MEMORY.md").read_text() == "- the memory\n"
    assert absent("/etc/cairn-sandbox-test")
    assert output.endswith("private\n")  # its own /tmp, gone with it
    assert absent("/tmp/cairn-sandbox-test")


@pytest.fixture
def listener() -> Iterator[int]:
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield server.getsockname()[1]


CONNECT = (
    f'{PYTHON} -c \'import socket, sys; socket.create_connection(("127.0.0.1", '
    'int(sys.argv[1])), timeout=3); print("connected")\' {port}'
)


@needs_bwrap
async def test_the_network_is_cut_unless_allowed(project: Path, listener: int) -> None:
    cut = await run(project, CONNECT.format(port=listener))
    allowed = await run(project, CONNECT.format(port=listener), network=True)

    assert cut["exitCode"] != 0 and "connected" not in cut["output"]
    assert allowed["exitCode"] == 0 and allowed["output"] == "connected\n"


@needs_bwrap
async def test_memory_is_bounded_and_other_processes_are_invisible(project: Path) -> None:
    grab = f"{PYTHON} -c 'bytearray({MEMORY_LIMIT + 1})'"

    memory = await run(project, grab + " 2>&1 | tail -1")
    processes = await run(project, "ls /proc | grep -c '^[0-9]'; cat /proc/1/environ | wc -c")

    assert memory["output"] == "MemoryError\n"
    count, _ = processes["output"].split()
    assert int(count) < 10  # bwrap, the shell and the pipe's commands


CAIRN = """
import asyncio, os, sys
from pathlib import Path
from shell.config import ToolSettings
from shell.tools.project.command import command_tool
from shell.tools.project.outputs import OutputStore
from shell.tools.project.root import ProjectRoot
from shell.tools.project.sandbox import Sandbox

async def main(project: Path, marker: str) -> None:
    tool = command_tool(
        ProjectRoot(project), OutputStore(project.parent / "out"), ToolSettings(), sandbox=Sandbox()
    )
    command = f"setsid sleep {marker} > /dev/null 2>&1 & ( (sleep {marker} &) & ); touch up; wait"
    asyncio.ensure_future(tool.call({"command": command}))
    while not (project / "up").exists():
        await asyncio.sleep(0.02)
    os._exit(0)

asyncio.run(main(Path(sys.argv[1]), sys.argv[2]))
"""
"""A Cairn that dies in the middle of a command, with no chance to clean up."""


@needs_bwrap
async def test_no_process_outlives_cairn_itself(project: Path) -> None:
    marker = f"{secrets.randbelow(10**6) + 10**6}.{secrets.randbelow(10**6)}"
    env = os.environ | {"PYTHONPATH": str(REPO)}
    cairn = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CAIRN, str(project), marker, env=env
    )

    assert await cairn.wait() == 0
    for _ in range(250):  # bwrap is killed with its parent, and its namespace with it
        if not running_with(marker):
            break
        await asyncio.sleep(0.02)
    assert running_with(marker) == []
    for _, folder in hierarchy.places if (hierarchy := cgroup.available()) else ():
        cgroup._remove_stale(folder)  # its cgroup, which the next Cairn to start would remove

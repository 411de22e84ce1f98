"""A sandboxed command's own cgroup, on real processes where Cairn may make one: a fork bomb stops
at the task bound, a memory hog at the memory bound, and no group is left behind, even by a
Cairn killed in a call. Where to make groups is found from /proc; that is checked on samples."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from shell.config import ToolSettings
from shell.tools.project import cgroup
from shell.tools.project.cgroup import MEMORY_MAX, TASKS_MAX, Hierarchy
from shell.tools.project.command import command_tool
from shell.tools.project.outputs import OutputStore
from shell.tools.project.root import ProjectRoot
from shell.tools.project.sandbox import Sandbox
from shell.tools.toolbox import CallContext, ToolResult
from tests.project.test_sandbox import PYTHON

REPO = Path(__file__).resolve().parents[2]
HIERARCHY = cgroup.available() if Sandbox().active else None
needs_cgroup = pytest.mark.skipif(
    HIERARCHY is None,
    reason=f"no sandbox ({Sandbox().unavailable()})"
    if not Sandbox().active
    else "no cgroup Cairn can make here: not root, and no delegated cgroup v2 subtree with pids",
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder.resolve()


async def call(project: Path, command: str, seconds: float = 60, **sandbox: Any) -> ToolResult:
    tool = command_tool(
        ProjectRoot(project),
        OutputStore(project.parent / "outputs"),
        ToolSettings(),
        {"PATH": os.environ["PATH"], "HOME": "/nonexistent"},
        sandbox=Sandbox(**sandbox),
    )
    return await tool.call({"command": command, "timeout": seconds}, context=CallContext("c1"))


async def run(project: Path, command: str, seconds: float = 60) -> dict[str, Any]:
    result = await call(project, command, seconds)
    assert result.error is None, result.error
    payload: dict[str, Any] = json.loads(result.content)
    return payload


def hierarchy() -> Hierarchy:
    assert HIERARCHY is not None
    return HIERARCHY


def groups(pid: int | None = None) -> list[Path]:
    """The groups of Cairn `pid` (default: this one) in the hierarchy's folders."""
    prefix = f"cairn-{os.getpid() if pid is None else pid}-"
    return [
        entry
        for _, folder in hierarchy().places
        for entry in folder.iterdir()
        if entry.name.startswith(prefix)
    ]


@needs_cgroup
async def test_a_fork_bomb_stops_at_the_task_bound_and_the_result_says_so(project: Path) -> None:
    bomb = "for i in $(seq 1500); do sleep 30 & echo $i; done; wait"

    payload = await run(project, bomb, seconds=60)

    started = [int(line) for line in payload["output"].split() if line.isdigit()]
    # bwrap, its namespace's init and the shell count too: the rest are the sleeps.
    assert TASKS_MAX - 8 <= max(started) <= TASKS_MAX - 3
    assert "Cannot fork" in payload["output"]
    assert payload["ended"] == "exited" and payload["exitCode"] != 0
    assert payload["bounds"] == [f"1 fork refused: the command had {TASKS_MAX:,} tasks"]
    assert groups() == []


@needs_cgroup
async def test_a_memory_hog_is_killed_at_the_memory_bound(project: Path) -> None:
    if "memory" not in hierarchy().controllers:
        pytest.skip("the memory controller is not Cairn's to use here")
    hog = f"{PYTHON} -c 'b = bytearray(6 * 1024**3); print(len(b))'"

    payload = await run(project, hog)

    assert MEMORY_MAX <= 4 * 1024**3
    assert payload["exitCode"] == 137 and str(6 * 1024**3) not in payload["output"]
    assert payload["bounds"] == [f"1 process killed: the command used {MEMORY_MAX / 1024**3:g} GiB"]
    assert groups() == []


@needs_cgroup
async def test_no_group_is_left_by_a_timeout_nor_a_cancelled_call(project: Path) -> None:
    timed_out = await run(project, "sleep 30 & sleep 30 & wait", seconds=0.5)
    task = asyncio.ensure_future(call(project, "touch up; sleep 30 & wait"))
    for _ in range(500):
        if (project / "up").exists():
            break
        await asyncio.sleep(0.02)
    in_call = groups()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert timed_out["ended"] == "timeout" and "bounds" not in timed_out
    assert len(in_call) == len({folder for _, folder in hierarchy().places})
    assert groups() == []


@needs_cgroup
async def test_a_group_that_cannot_be_joined_fails_the_call_and_is_removed(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(self: cgroup.CallGroup) -> None:
        raise PermissionError("no")

    monkeypatch.setattr(cgroup.CallGroup, "join", refuse)  # in the forked child too

    result = await call(project, "true")

    assert result.error is not None and result.error.startswith("the command could not start")
    assert groups() == []


@needs_cgroup
async def test_without_a_cgroup_the_rlimits_are_what_is_said() -> None:
    with_group, without = Sandbox().describe(), Sandbox(cgroups=False).describe()

    assert with_group == f"bubblewrap, network off, {hierarchy().describe()}"
    if os.geteuid() == 0:
        assert without.endswith(
            "no cgroup: processes bounded only by the timeout (root), "
            "≤16 GiB of address space per process"
        )
    else:
        assert "≤4,096 processes of the user (RLIMIT_NPROC)" in without


CAIRN = """
import asyncio, os, sys
from pathlib import Path
from shell.config import ToolSettings
from shell.tools.project.command import command_tool
from shell.tools.project.outputs import OutputStore
from shell.tools.project.root import ProjectRoot
from shell.tools.project.sandbox import Sandbox

async def main(project: Path) -> None:
    tool = command_tool(
        ProjectRoot(project), OutputStore(project.parent / "out"), ToolSettings(), sandbox=Sandbox()
    )
    asyncio.ensure_future(tool.call({"command": "touch up; sleep 30"}))
    while not (project / "up").exists():
        await asyncio.sleep(0.02)
    os._exit(0)

asyncio.run(main(Path(sys.argv[1])))
"""
"""A Cairn that dies in the middle of a command, with no chance to remove its group."""


@needs_cgroup
def test_the_groups_of_a_cairn_killed_in_a_call_are_removed_at_the_next_start(
    project: Path,
) -> None:
    env = os.environ | {"PYTHONPATH": str(REPO)}
    cairn = subprocess.Popen([sys.executable, "-c", CAIRN, str(project)], env=env)
    assert cairn.wait() == 0
    left = groups(cairn.pid)

    subprocess.run(
        [sys.executable, "-c", "from shell.tools.project import cgroup; cgroup.available()"],
        env=env,
        check=True,
    )

    assert len(left) == len({folder for _, folder in hierarchy().places})
    assert all(not path.exists() for path in left)


HYBRID = """\
35 25 0:30 / /sys/fs/cgroup/unified rw,relatime shared:10 - cgroup2 cgroup2 rw
36 25 0:31 / /sys/fs/cgroup/memory rw,relatime shared:11 - cgroup cgroup rw,memory
37 25 0:32 / /sys/fs/cgroup/pids rw,relatime shared:12 - cgroup cgroup rw,pids
38 25 0:33 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:13 - cgroup cgroup rw,cpu,cpuacct
"""
HYBRID_OWN = "8:pids:/\n4:memory:/jobs/42\n2:cpu,cpuacct:/\n0::/\n"


def test_the_mounts_and_own_groups_are_read_from_proc() -> None:
    mounts, own = cgroup._mounts(HYBRID), cgroup._own_cgroups(HYBRID_OWN)

    assert mounts["cgroup2"] == (Path("/sys/fs/cgroup/unified"), "/")
    assert mounts["pids"] == (Path("/sys/fs/cgroup/pids"), "/")
    assert mounts["cpuacct"] == (Path("/sys/fs/cgroup/cpu,cpuacct"), "/")
    assert own == {"pids": "/", "memory": "/jobs/42", "cpu": "/", "cpuacct": "/", "": "/"}


def test_v2_groups_go_in_the_nearest_cgroup_that_hands_out_pids(tmp_path: Path) -> None:
    app = tmp_path / "user.slice" / "user-1000.slice" / "user@1000.service" / "app.slice"
    scope = app / "app-term-1.scope"
    scope.mkdir(parents=True)
    for folder, handed in ((tmp_path, "cpu memory pids"), (app, "memory pids"), (scope, "")):
        (folder / "cgroup.subtree_control").write_text(handed)
        (folder / "cgroup.procs").write_text("")
    for folder in (app.parent, app.parent.parent, app.parent.parent.parent):
        (folder / "cgroup.subtree_control").write_text("")
    own = {"": "/" + str(scope.relative_to(tmp_path))}
    hidden_root = {"cgroup2": (tmp_path / "user.slice", "/user.slice")}

    found = cgroup._v2({"cgroup2": (tmp_path, "/")}, own)
    in_a_container = cgroup._v2(hidden_root, own)
    (app / "cgroup.subtree_control").write_text("memory")
    above = cgroup._v2({"cgroup2": (tmp_path, "/")}, own)
    (tmp_path / "cgroup.subtree_control").write_text("cpu memory")
    nowhere = cgroup._v2({"cgroup2": (tmp_path, "/")}, own)

    assert found == Hierarchy(2, (("pids", app), ("memory", app)))
    assert in_a_container == Hierarchy(2, (("pids", app), ("memory", app)))
    assert above == Hierarchy(2, (("pids", tmp_path), ("memory", tmp_path)))
    assert nowhere is None
    assert found.describe() == f"cgroup v2: ≤{TASKS_MAX:,} tasks, ≤{MEMORY_MAX / 1024**3:g} GiB"

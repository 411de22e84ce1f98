"""A cgroup per sandboxed command: at most `TASKS_MAX` tasks and `MEMORY_MAX` bytes for the
command and everything it starts, where Cairn may make one.

Where (`available()`, found once and proved by running `true` in a group):

- **cgroup v2**: the nearest cgroup from Cairn's own upwards whose `cgroup.subtree_control`
  hands `pids` to its children and that Cairn can write (root; a user under a systemd user
  manager, whose `app.slice` is delegated to it; not an ssh session's scope, which is root's).
  A cgroup holding processes cannot hand out controllers, so this is usually the parent of
  Cairn's own (its scope's slice), and the command leaves the limits of Cairn's scope.
- **cgroup v1**: the `pids` hierarchy (and `memory`, when it is there too), a group inside
  Cairn's own in each, where they are writable (in practice: root).

Elsewhere (a user without delegation, a read-only `/sys/fs/cgroup`) there is none, and only the
rlimits of `sandbox.limit_resources` bound a command.

A call's group is `cairn-<Cairn's pid>-<n>`. The command's process joins it before it execs bwrap
(`CallGroup.join`); every process it starts inherits it, across bwrap's new namespaces too. After
the call the group is removed, whatever is left in it killed. A Cairn killed in a call leaves an
empty group behind: the next Cairn to look here removes the groups of pids no longer running.
Memory counts what the command holds, its page cache and its `/tmp` (a tmpfs).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from shell.text import counted

TASKS_MAX = 1024
"""Tasks (processes and their threads: the pids controller counts both) one command may have."""
MEMORY_MAX = min(4 * 1024**3, os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2)
"""Bytes of memory (resident, page cache and its /tmp) one command may use: 4 GiB, or half the
RAM when that is less."""
REMOVE_TIMEOUT = 5.0
"""Seconds to wait for a group's last task to go before leaving it to the next start."""
NAME = re.compile(r"cairn-(\d+)-\d+")
LIMITS = {
    1: {"pids": ("pids.max", TASKS_MAX), "memory": ("memory.limit_in_bytes", MEMORY_MAX)},
    2: {"pids": ("pids.max", TASKS_MAX), "memory": ("memory.max", MEMORY_MAX)},
}
"""The file that bounds each controller, and its value, by cgroup version."""
NO_SWAP = {1: ("memory.memsw.limit_in_bytes", MEMORY_MAX), 2: ("memory.swap.max", 0)}
"""Where swap is accounted: the memory bound holds for memory and swap together."""
_calls = itertools.count()


@dataclass(frozen=True)
class Hierarchy:
    """Where Cairn makes its groups: cgroup `version`, and for each controller (`pids`, maybe
    `memory`) the folder the groups are made in (one folder for both in v2)."""

    version: int
    places: tuple[tuple[str, Path], ...]

    @property
    def controllers(self) -> tuple[str, ...]:
        return tuple(controller for controller, _ in self.places)

    def describe(self) -> str:
        """The bounds, for `Sandbox.describe`: "cgroup v1: ≤1,024 tasks, ≤4 GiB"."""
        bounds = [f"≤{TASKS_MAX:,} tasks"]
        if "memory" in self.controllers:
            bounds.append(f"≤{MEMORY_MAX / 1024**3:g} GiB")
        return f"cgroup v{self.version}: {', '.join(bounds)}"

    def create(self) -> CallGroup:
        """A new group for one call, its limits set (OSError: it could not be made; what was
        made is removed)."""
        name = f"cairn-{os.getpid()}-{next(_calls)}"
        group = CallGroup(self.version, tuple((c, folder / name) for c, folder in self.places))
        try:
            for folder in group.folders:
                folder.mkdir()
            for controller, folder in group.places:
                file, value = LIMITS[self.version][controller]
                (folder / file).write_text(str(value))
                swap, most = NO_SWAP[self.version]
                if controller == "memory" and (folder / swap).exists():
                    (folder / swap).write_text(str(most))
        except OSError:
            group.close()
            raise
        return group


@dataclass(frozen=True)
class CallGroup:
    """One call's group: a folder per controller (the same one in v2)."""

    version: int
    places: tuple[tuple[str, Path], ...]

    @property
    def folders(self) -> list[Path]:
        return list(dict.fromkeys(folder for _, folder in self.places))

    def join(self) -> None:
        """Move the calling process into the group: in the command's child, before exec."""
        for folder in self.folders:
            (folder / "cgroup.procs").write_text("0")

    def hits(self) -> list[str]:
        """The bounds the command ran into, said for the model (empty: none)."""
        said: list[str] = []
        for controller, folder in self.places:
            if controller == "pids" and (refused := _count(folder / "pids.events", "max")):
                said.append(
                    f"{counted(refused, 'fork')} refused: the command had {TASKS_MAX:,} tasks"
                )
            if controller == "memory":
                events = "memory.events" if self.version == 2 else "memory.oom_control"
                if killed := _count(folder / events, "oom_kill"):
                    size = f"{MEMORY_MAX / 1024**3:g} GiB"
                    said.append(f"{counted(killed, 'process')} killed: the command used {size}")
        return said

    def close(self) -> list[str]:
        """After the call: the bounds it ran into (`hits`), and the group removed, whatever is
        left in it killed (one still busy after `REMOVE_TIMEOUT` is left to the next start)."""
        said = self.hits()
        for folder in self.folders:
            _remove(folder)
        return said


NO_GROUP = CallGroup(0, ())
"""A command's group where there is none: joining it and closing it do nothing."""


@functools.cache
def available() -> Hierarchy | None:
    """Where per-call groups can be made here (None: nowhere), found once; the stale groups of
    Cairns no longer running are removed on the way."""
    try:
        mounts = _mounts(Path("/proc/self/mountinfo").read_text())
        own = _own_cgroups(Path("/proc/self/cgroup").read_text())
    except OSError:
        return None
    hierarchy = _v2(mounts, own) or _v1(mounts, own)
    if hierarchy is None:
        return None
    for folder in dict.fromkeys(folder for _, folder in hierarchy.places):
        _remove_stale(folder)
    try:
        group = hierarchy.create()
    except OSError:
        return None
    try:
        subprocess.run(["/bin/sh", "-c", ":"], preexec_fn=group.join, check=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    finally:
        group.close()
    return hierarchy


def _v2(mounts: dict[str, tuple[Path, str]], own: dict[str, str]) -> Hierarchy | None:
    if "" not in own or "cgroup2" not in mounts:
        return None
    folder = _inside(mounts["cgroup2"], own[""])
    while folder is not None:
        try:
            handed = (folder / "cgroup.subtree_control").read_text().split()
        except OSError:
            return None
        if "pids" in handed and _writable(folder):
            places = tuple((c, folder) for c in ("pids", "memory") if c in handed)
            return Hierarchy(2, places)
        if folder == mounts["cgroup2"][0]:
            return None
        folder = folder.parent
    return None


def _v1(mounts: dict[str, tuple[Path, str]], own: dict[str, str]) -> Hierarchy | None:
    places: list[tuple[str, Path]] = []
    for controller in ("pids", "memory"):
        if controller in mounts and controller in own:
            folder = _inside(mounts[controller], own[controller])
            if folder is not None and _writable(folder):
                places.append((controller, folder))
    return Hierarchy(1, tuple(places)) if places and places[0][0] == "pids" else None


def _own_cgroups(text: str) -> dict[str, str]:
    """A process's cgroup path by controller ("" for v2's), from its /proc/<pid>/cgroup."""
    own: dict[str, str] = {}
    for line in text.splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            own[controller] = path
    return own


def _mounts(text: str) -> dict[str, tuple[Path, str]]:
    """The cgroup mounts of a /proc/<pid>/mountinfo by controller ("cgroup2" for v2's): mount
    point, and the cgroup path it shows (a container may see only its own subtree)."""
    found: dict[str, tuple[Path, str]] = {}
    for line in text.splitlines():
        fields = line.split()
        if "-" not in fields:
            continue
        after = fields[fields.index("-") + 1 :]
        point = (Path(fields[4].replace("\\040", " ")), fields[3])
        if after[0] == "cgroup2":
            found.setdefault("cgroup2", point)
        elif after[0] == "cgroup" and len(after) > 2:
            for option in after[2].split(","):
                found.setdefault(option, point)
    return found


def _inside(mount: tuple[Path, str], path: str) -> Path | None:
    """The folder of cgroup `path` under `mount` (None: the mount does not show it)."""
    point, root = mount
    relative = Path(path).relative_to("/")
    if root != "/":
        if not Path(path).is_relative_to(root):
            return None
        relative = Path(path).relative_to(root)
    folder = point / relative
    return folder if folder.is_dir() else None


def _writable(folder: Path) -> bool:
    return os.access(folder, os.W_OK) and os.access(folder / "cgroup.procs", os.W_OK)


def _count(file: Path, key: str) -> int:
    """The figure after `key` in a flat-keyed cgroup file (0: none, or no such file)."""
    with contextlib.suppress(OSError, ValueError):
        for line in file.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    return 0


def _remove(folder: Path, timeout: float = REMOVE_TIMEOUT) -> bool:
    """Kill the group's tasks and remove it, waiting `timeout` seconds at most for them to go."""
    deadline, pause = time.monotonic() + timeout, 0.0002
    while True:
        try:
            folder.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError:
            if time.monotonic() > deadline:
                return False
        with contextlib.suppress(OSError, ValueError):
            for pid in (folder / "cgroup.procs").read_text().split():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(int(pid), signal.SIGKILL)
        # The last tasks of a call that ended leave the group a fraction of a millisecond late.
        time.sleep(pause)
        pause = min(pause * 2, 0.01)


def _remove_stale(folder: Path) -> None:
    """Remove the groups left by Cairns that are gone (a pid no longer running, or this one's
    pid, reused: this Cairn has made none yet)."""
    with contextlib.suppress(OSError):
        for entry in folder.iterdir():
            if (match := NAME.fullmatch(entry.name)) and not _running(int(match[1])):
                _remove(entry, timeout=0.5)  # tasks this Cairn cannot see (another PID namespace's)


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

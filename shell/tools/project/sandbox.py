"""The sandbox a command runs in (bubblewrap, on Linux), and whether it works here.

A sandboxed command sees the whole machine read-only, with these exceptions:

- **writable**: the project folder, and a private `/tmp` (a tmpfs, gone with the call);
- **read-only inside the project**: `.git` (so hooks and `.git/config` cannot be rewritten to
  run something later, outside) and the `core.hooksPath` folder;
- **hidden** (an empty read-only tmpfs over a folder, `/dev/null` over a file): the memory
  workspace, Cairn's state and config folders, the credentials of the home folder
  (`CREDENTIALS`, those that exist), and `/run` with its sockets (`RUNTIME`);
- **no capabilities** (`--cap-drop ALL`): root in the sandbox cannot remount `/` writable nor
  unmount what hides a folder;
- **its own processes only** (`--unshare-pid`): no other `/proc/<pid>/environ` can be read, and
  when the shell ends, or bwrap is killed, every process it left dies with it, `setsid` or not;
- **no network** (`--unshare-net`, only a loopback of its own), unless `[tools] network = true`;
- **bounded**: where Cairn may make a cgroup (`shell.tools.project.cgroup`), the command as a
  whole: its tasks and its memory; elsewhere each process's address space (`MEMORY_LIMIT`, which
  holds in a cgroup too) and, for a user other than root, the user's processes (`PROCESS_LIMIT`;
  the kernel exempts root from it, so then only the timeout ends a fork bomb).

Where bwrap is missing, fails its probe, or the system is not Linux, a command runs unsandboxed
(`Sandbox.unavailable` says why) and the session says so; `[tools] sandbox = "off"` asks for that.
"""

from __future__ import annotations

import functools
import os
import pwd
import resource
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from shell.config import Settings, config_file
from shell.tools.project import cgroup
from shell.tools.project.cgroup import NO_GROUP, CallGroup

MEMORY_LIMIT = 16 * 1024**3
"""Bytes of address space a command's process may map (RLIMIT_AS), each."""
PROCESS_LIMIT = 4096
"""Processes the user may have while the command runs (RLIMIT_NPROC; root is exempt)."""
CREDENTIALS = (
    ".ssh",
    ".aws",
    ".gnupg",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".vault-token",
    ".docker",
    ".kube",
    ".azure",
    ".config/gh",
    ".config/hub",
    ".config/gcloud",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".terraform.d",
)
"""Paths under the home folder that hold credentials: hidden from every sandboxed command."""
RUNTIME = Path("/run")
"""Hidden: its sockets connect even on a read-only mount (systemd's and D-Bus's, which start
programs outside as root; docker's; an ssh or gpg agent's in /run/user)."""
SHOWN = (Path("/run/systemd/resolve"),)
"""Shown again, read-only, in the hidden `/run`: `/etc/resolv.conf` may point there."""
PROBE_TIMEOUT = 10.0


@dataclass(frozen=True)
class Sandbox:
    """How commands are confined for one session.

    Args:
        hidden: Cairn's own folders and files (the workspace, its state, its config).
        network: Whether a command may reach the network.
        mode: "auto" (sandboxed where bwrap works) or "off" (never).
        cgroups: Whether each command gets a cgroup of its own, where one can be made.
    """

    hidden: tuple[Path, ...] = ()
    network: bool = False
    mode: str = "auto"
    cgroups: bool = True

    @classmethod
    def for_settings(cls, settings: Settings, environ: Mapping[str, str] | None = None) -> Sandbox:
        """The sandbox `settings` ask for, hiding their workspace, state and config: the whole
        platform config folder, or `$CAIRN_CONFIG` and Cairn's files beside it (that folder may
        be anyone's: `/etc`, the home folder)."""
        env = os.environ if environ is None else environ
        if "CAIRN_CONFIG" in env:
            config = Path(env["CAIRN_CONFIG"])
            own: tuple[Path, ...] = (config, config.parent / "state.toml", config.parent / "themes")
        else:
            own = (config_file().parent,)
        hidden = (settings.workspace, settings.state_dir, *own)
        return cls(hidden=hidden, network=settings.tools.network, mode=settings.tools.sandbox)

    def unavailable(self) -> str | None:
        """Why commands run unsandboxed (None: they do not)."""
        if self.mode == "off":
            return 'the [tools] sandbox setting is "off"'
        if not sys.platform.startswith("linux"):
            return f"the sandbox needs Linux (this is {sys.platform})"
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            return "bubblewrap (bwrap) is not installed"
        return probe(bwrap, network=self.network)

    @property
    def active(self) -> bool:
        """Whether commands run in the sandbox."""
        return self.unavailable() is None

    def describe(self) -> str:
        """One line for `/tools` and the start: how commands run."""
        if (reason := self.unavailable()) is not None:
            return f"unsandboxed: {reason}"
        return f"bubblewrap, network {'on' if self.network else 'off'}, {self._bounds()}"

    def _bounds(self) -> str:
        """What bounds a command's processes and memory."""
        each = f"≤{MEMORY_LIMIT // 1024**3} GiB of address space per process"
        if self.cgroups and (hierarchy := cgroup.available()) is not None:
            bounded = "memory" in hierarchy.controllers
            return hierarchy.describe() + ("" if bounded else f", {each}")
        if os.geteuid() == 0:
            return f"no cgroup: processes bounded only by the timeout (root), {each}"
        return f"no cgroup: ≤{PROCESS_LIMIT:,} processes of the user (RLIMIT_NPROC), {each}"

    def note(self) -> str:
        """What the model should know of the sandbox, for run_command's description."""
        if not self.active:
            return ""
        network = "" if self.network else " There is no network."
        return (
            " It runs sandboxed: only the project folder and /tmp are writable (.git and the "
            f"home folder are read-only, so `git commit` fails).{network}"
        )

    def launch(
        self, command: str, cwd: Path, home: str | None
    ) -> tuple[list[str] | None, CallGroup]:
        """`argv`, when commands run sandboxed and `cwd` is there (None: run it bare; a missing
        folder fails to start as it would unsandboxed), and the command's new cgroup (`NO_GROUP`
        if none; OSError: it could not be made), which the caller closes."""
        if not (self.active and cwd.is_dir()):
            return None, NO_GROUP
        hierarchy = cgroup.available() if self.cgroups else None
        group = hierarchy.create() if hierarchy is not None else NO_GROUP
        return self.argv(command, cwd, home), group

    def argv(self, command: str, cwd: Path, home: str | None) -> list[str]:
        """The bwrap command line that runs `/bin/sh -c command` in `cwd`, the project folder
        (`home`: the command's home folder, whose credentials are hidden)."""
        bwrap = shutil.which("bwrap") or "bwrap"
        argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        argv += ["--tmpfs", "/tmp", "--unshare-pid", "--die-with-parent", "--cap-drop", "ALL"]
        if not self.network:
            argv.append("--unshare-net")
        project = cwd.resolve()
        homes = dict.fromkeys(folder for folder in (home, _own_home()) if folder)
        credentials = [Path(folder, name) for folder in homes for name in CREDENTIALS]
        secret = _existing([RUNTIME, *self.hidden, *credentials], project)
        around = [path for path in secret if project.is_relative_to(path)]
        inside = [path for path in secret if path not in around]
        argv += _hide(around)
        argv += ["--bind", str(project), str(project)]
        for path in _existing([project / ".git", *_hooks_folder(project)], None):
            argv += ["--ro-bind", str(path), str(path)]
        argv += _hide(inside)
        for path in _existing(SHOWN, None):
            argv += ["--ro-bind", str(path), str(path)]
        # Read-only only now: a folder made read-only earlier could not take the binds in it.
        for path in (path for path in [*around, *inside] if path.is_dir()):
            argv += ["--remount-ro", str(path)]
        argv += ["--setenv", "TMPDIR", "/tmp", "--chdir", str(project)]
        return [*argv, "--", "/bin/sh", "-c", command]


def limit_resources(group: CallGroup = NO_GROUP) -> None:
    """In the command's process, before it runs: put it in the call's `group`, and bound its
    memory and the user's processes."""
    group.join()
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    _, hard = resource.getrlimit(resource.RLIMIT_NPROC)
    limit = PROCESS_LIMIT if hard == resource.RLIM_INFINITY else min(PROCESS_LIMIT, hard)
    resource.setrlimit(resource.RLIMIT_NPROC, (limit, limit))


@functools.cache
def probe(bwrap: str, *, network: bool) -> str | None:
    """Why bwrap cannot run a sandbox here (None: it can), found once per process by running
    `true` in the sandbox's namespaces."""
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid"]
    argv += ["--die-with-parent", "--cap-drop", "ALL", *([] if network else ["--unshare-net"])]
    argv.append("true")
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bwrap could not run: {error}"
    if done.returncode != 0:
        said = done.stderr.strip().splitlines()
        return f"bwrap fails here: {said[-1] if said else f'exit code {done.returncode}'}"
    return None


def _existing(paths: Iterable[Path], project: Path | None) -> list[Path]:
    """The real paths of `paths` that exist, each once, none inside another one (which hides it
    already) unless the project lies between them (its bind shows it again)."""
    found: list[Path] = []
    for path in paths:
        real = path.expanduser().resolve()
        if real.exists() and real != project and real not in found:
            found.append(real)
    return [
        path
        for path in found
        if not any(
            path != other
            and path.is_relative_to(other)
            and not (project and project.is_relative_to(other) and path.is_relative_to(project))
            for other in found
        )
    ]


def _own_home() -> str | None:
    """The home folder the user database gives (HOME may name another)."""
    try:
        return pwd.getpwuid(os.getuid()).pw_dir
    except (KeyError, OSError):
        return None


def _hide(paths: Iterable[Path]) -> list[str]:
    argv: list[str] = []
    for path in paths:
        if path.is_dir():
            argv += ["--tmpfs", str(path)]
        else:
            argv += ["--ro-bind", "/dev/null", str(path)]
    return argv


def _hooks_folder(project: Path) -> list[Path]:
    """The `core.hooksPath` the project's git would use, when it lies in the project."""
    from shell.git.runner import Git, GitFailure

    try:
        done = Git(project).run(
            ["config", "--show-scope", "--get-all", "core.hooksPath"], check=False
        )
    except GitFailure:  # no git at all: no hooks to keep
        return []
    # The door itself sets core.hooksPath=/dev/null on its command line ("command" scope).
    values = [
        value
        for line in done.stdout.splitlines()
        if (scope_value := line.split("\t", 1))[0] != "command"
        and len(scope_value) == 2
        and (value := scope_value[1])
    ]
    if not values:
        return []
    folder = (project / Path(values[-1]).expanduser()).resolve()
    return [folder] if folder.is_relative_to(project) else []

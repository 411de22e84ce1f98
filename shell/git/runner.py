"""The one way any git command runs: the memory's commits and history, and the sync.

The CLI, never a prompt, failures sorted into kinds. Every command runs with
`GIT_TERMINAL_PROMPT=0`, so a remote that wants a password fails at once instead of waiting on
a terminal nobody watches; no editor is ever started, and no hook ever runs. The user's own git
config, ssh agent and credential helpers still apply. ssh runs in batch mode with a connect
timeout, unless the user chose their own ssh command. Messages are read in the C locale, and any
URL in them loses its userinfo (`https://user:token@host` → `https://***@host`) before it goes
anywhere (`one_line`).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from shell.events.sync import FailureKind

NETWORK_TIMEOUT_S = 300.0
"""A fetch, push or clone that takes longer than this is treated as offline."""
LOCAL_TIMEOUT_S = 120.0

_CONFIG = (
    *("-c", "core.quotePath=false", "-c", "core.hooksPath=/dev/null"),
    *("-c", "core.fsmonitor=false"),
)
"""Paths as they are (not octal-quoted), and no hook ever runs: a commit, a ref update, a merge
or a push of the memory starts nothing of the repository's own, nor an fsmonitor command a
config names (`git add` and `git status` would start it)."""
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)(?P<userinfo>[^/@\s]+)@")
_OFFLINE = (
    "could not resolve host",
    "could not resolve hostname",
    "connection refused",
    "unable to connect",
    "network is unreachable",
    "connection timed out",
    "operation timed out",
    "no route to host",
    "failed to connect",
    "connection reset",
    "temporary failure in name resolution",
    "unable to look up",
    "the remote end hung up unexpectedly",
)
_AUTH = (
    "authentication failed",
    "permission denied",
    "could not read username",
    "could not read password",
    "terminal prompts disabled",
    "invalid username or password",
    "host key verification failed",
    "the requested url returned error: 401",
    "the requested url returned error: 403",
)


def redact_url(text: str) -> str:
    """`text` with the userinfo of every URL in it replaced by `***`."""
    return _USERINFO.sub(lambda m: f"{m['scheme']}***@", text)


def classify(stderr: str) -> FailureKind:
    """The kind of a failed network command, from what git said."""
    lowered = stderr.lower()
    if any(marker in lowered for marker in _AUTH):
        return "auth"
    if any(marker in lowered for marker in _OFFLINE):
        return "offline"
    return "error"


def one_line(stderr: str, limit: int = 300) -> str:
    """git's message as one redacted line, without its hints."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith("hint:")]
    text = " ".join(lines) or "git failed without a message"
    text = redact_url(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


class GitFailure(Exception):
    """A git command failed; `kind` says what kind of failure it is, `message` in one line."""

    def __init__(self, kind: FailureKind, message: str) -> None:
        super().__init__(message)
        self.kind: FailureKind = kind
        self.message = message


@dataclass(frozen=True)
class Result:
    """What one git command returned."""

    code: int
    stdout: str
    stderr: str


class Git:
    """The git CLI in one repository, with the sync's environment and an injected identity.

    Args:
        root: The working tree (or None for commands that run elsewhere, such as a clone).
        author_name: Author and committer of every commit the sync makes.
        author_email: Their email.
        clock: When given, the date of those commits.
    """

    def __init__(
        self,
        root: Path | None,
        *,
        author_name: str = "Cairn",
        author_email: str = "cairn@localhost",
        clock: object = None,
    ) -> None:
        self.root = root
        self.author_name = author_name
        self.author_email = author_email
        self._clock = clock
        self._ssh_configured: bool | None = None

    def run(
        self,
        args: Sequence[str],
        *,
        stdin: str | None = None,
        env: Mapping[str, str] | None = None,
        check: bool = True,
        network: bool = False,
    ) -> Result:
        """Run `git <args>`; raise GitFailure when it fails and `check` is set.

        A network command that fails is classified (offline, auth, error); a local one is an
        "error". Its message is always redacted.
        """
        command = ["git", *_CONFIG, *args]
        try:
            done = subprocess.run(
                command,
                cwd=self.root,
                input=stdin,
                stdin=subprocess.DEVNULL if stdin is None else None,
                capture_output=True,
                text=True,
                encoding="utf-8",
                errors="surrogateescape",
                env=self._environment(env, network),
                timeout=NETWORK_TIMEOUT_S if network else LOCAL_TIMEOUT_S,
                check=False,
                # No controlling terminal: ssh and credential helpers cannot prompt on it.
                start_new_session=network,
            )
        except subprocess.TimeoutExpired:
            kind: FailureKind = "offline" if network else "error"
            raise GitFailure(kind, f"git {args[0]} timed out") from None
        except OSError as error:
            raise GitFailure("error", f"git could not be started: {error}") from None
        result = Result(done.returncode, done.stdout, done.stderr)
        if check and result.code != 0:
            kind = classify(result.stderr) if network else "error"
            raise GitFailure(kind, f"git {args[0]}: {one_line(result.stderr)}")
        return result

    def run_bytes(
        self,
        args: Sequence[str],
        *,
        stdin: bytes | None = None,
        ok_codes: range = range(1),
        env: Mapping[str, str] | None = None,
    ) -> tuple[int, bytes]:
        """Run a local `git <args>` on bytes; raise GitFailure unless its exit code is in
        `ok_codes`. Returns (exit code, stdout)."""
        try:
            done = subprocess.run(
                ["git", *_CONFIG, *args],
                cwd=self.root,
                input=stdin,
                stdin=subprocess.DEVNULL if stdin is None else None,
                capture_output=True,
                env=self._environment(env, False),
                timeout=LOCAL_TIMEOUT_S,
                check=False,
            )
        except (subprocess.TimeoutExpired, OSError) as error:
            raise GitFailure("error", f"git {args[0]} failed: {error}") from None
        if done.returncode not in ok_codes:
            message = one_line(done.stderr.decode("utf-8", "replace"))
            raise GitFailure("error", f"git {args[0]}: {message}")
        return done.returncode, done.stdout

    def out(self, *args: str) -> str:
        """The stripped stdout of a local command that must succeed."""
        return self.run(args).stdout.strip()

    def rev(self, name: str) -> str | None:
        """The commit `name` points at, or None when it does not exist."""
        done = self.run(["rev-parse", "-q", "--verify", f"{name}^{{commit}}"], check=False)
        return done.stdout.strip() or None if done.code == 0 else None

    def is_ancestor(self, older: str, newer: str) -> bool:
        """Whether `older` is `newer` or one of its ancestors."""
        return self.run(["merge-base", "--is-ancestor", older, newer], check=False).code == 0

    def identity_env(self) -> dict[str, str]:
        """The author and committer of a commit the sync makes, with the injected date."""
        env = {
            "GIT_AUTHOR_NAME": self.author_name,
            "GIT_AUTHOR_EMAIL": self.author_email,
            "GIT_COMMITTER_NAME": self.author_name,
            "GIT_COMMITTER_EMAIL": self.author_email,
        }
        if callable(self._clock):
            moment = self._clock()
            if isinstance(moment, datetime):
                moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
                env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = moment.isoformat()
        return env

    def _own_ssh(self) -> bool:
        """Whether the user's config names an ssh command (the environment would override it)."""
        if self._ssh_configured is None:
            done = subprocess.run(
                ["git", "config", "--get", "core.sshCommand"],
                cwd=self.root,
                capture_output=True,
                text=True,
                check=False,
            )
            self._ssh_configured = bool(done.stdout.strip())
        return self._ssh_configured

    def _environment(self, extra: Mapping[str, str] | None, network: bool) -> dict[str, str]:
        env = dict(os.environ)
        env["GIT_TERMINAL_PROMPT"] = "0"
        env["LC_ALL"] = "C"
        env["LANGUAGE"] = "C"
        env.setdefault("GCM_INTERACTIVE", "never")
        if (
            network
            and "GIT_SSH_COMMAND" not in env
            and "GIT_SSH" not in env
            and not self._own_ssh()
        ):
            env["GIT_SSH_COMMAND"] = "ssh -o BatchMode=yes -o ConnectTimeout=15"
        # A hook or editor must never wait on us either.
        env["GIT_EDITOR"] = ":"
        env.pop("GIT_DIR", None)
        env.pop("GIT_WORK_TREE", None)
        if extra:
            env.update(extra)
        return env

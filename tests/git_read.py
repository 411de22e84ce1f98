"""A test's git repository read back with the git CLI: what the tests check of a commit (its
message, author, committer, dates, files, blobs), without a git library."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

_PERSON = re.compile(
    r"^(?P<role>author|committer) (?P<name>.*) <(?P<email>.*)> (?P<at>\d+) (?P<tz>\S+)$"
)


def git(root: Path, *args: str) -> str:
    """The stdout of `git <args>` in `root`, which must succeed."""
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


@dataclass(frozen=True)
class Commit:
    sha: str
    message: str
    """Exactly as committed."""
    author: tuple[str, str]
    """(name, email)"""
    committer: tuple[str, str]
    authored: datetime
    committed: datetime
    files: list[str]
    """The paths it changed (against its parent; a first commit: all it holds)."""

    @property
    def summary(self) -> str:
        return self.message.partition("\n")[0]


def commit(root: Path, rev: str = "HEAD") -> Commit:
    sha = git(root, "rev-parse", "--verify", f"{rev}^{{commit}}").strip()
    header, _, message = git(root, "cat-file", "commit", sha).partition("\n\n")
    people = {m["role"]: m for line in header.splitlines() if (m := _PERSON.match(line))}
    files = git(root, "diff-tree", "--no-commit-id", "--name-only", "-r", "--root", sha)
    return Commit(
        sha=sha,
        message=message,
        author=(people["author"]["name"], people["author"]["email"]),
        committer=(people["committer"]["name"], people["committer"]["email"]),
        authored=_when(people["author"]),
        committed=_when(people["committer"]),
        files=files.splitlines(),
    )


def commits(root: Path) -> list[Commit]:
    """Every commit reachable from HEAD, newest first; [] before the first."""
    if not has_commits(root):
        return []
    return [commit(root, sha) for sha in git(root, "rev-list", "HEAD").split()]


def has_commits(root: Path) -> bool:
    done = subprocess.run(
        ["git", "rev-parse", "-q", "--verify", "HEAD"], cwd=root, capture_output=True, check=False
    )
    return done.returncode == 0


def blob(root: Path, rev: str, path: str) -> bytes:
    """The content of `path` in commit `rev`."""
    done = subprocess.run(
        ["git", "cat-file", "blob", f"{rev}:{path}"], cwd=root, capture_output=True, check=True
    )
    return done.stdout


def _when(person: re.Match[str]) -> datetime:
    zone = person["tz"]
    offset = timedelta(hours=int(zone[1:3]), minutes=int(zone[3:5]))
    tz = timezone(-offset if zone.startswith("-") else offset)
    return datetime.fromtimestamp(int(person["at"]), tz)

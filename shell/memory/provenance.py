"""Where a memory line came from: the commit that wrote it, and through it the session, turn and
message, the person, the other agent or the machine.

A line is found by `git blame` (its commit, and its line number then), so lines written above it
later do not lose it. Two kinds of commit only carry a line on, and are followed back to the one
that first wrote it: a revert restores what the commit it reverts removed (found in that commit's
parent), and a dream acceptance promotes the note line its `Source:` cites (blamed as it was when
the acceptance was committed). What a commit says of itself (`shell.git.history_commit`) names
the session and turn; the turn itself is read from the session's files when this machine holds
them (`shell.session.turns`).
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal

from shell.git.history_commit import HistoryCommit, history_commit
from shell.git.runner import GitFailure
from shell.git.store import GitStore
from shell.memory.paths import DIARY_FILE, MemoryPathError, locate

Carried = Literal["wrote", "restored", "promoted"]
ROOT_FILES = frozenset({DIARY_FILE, "AGENTS.md", "SOUL.md"})
"""Files outside the memory tree whose lines can be traced too."""
MAX_STEPS = 8
"""How far back a chain of reverts and promotions is followed."""
_UNCOMMITTED = "0" * 40
_REVERTS = re.compile(r"^This reverts commit (?P<sha>[0-9a-f]{40})\b", re.MULTILINE)
_SOURCE = re.compile(r"Source: (?P<path>\S+?\.md)#L(?P<line>\d+)(?:-L\d+)?\s*$")


@dataclass(frozen=True)
class Step:
    """One commit on a line's way into the file, and where the line was in it."""

    commit: HistoryCommit
    path: str
    line: int
    text: str
    how: Carried
    """`wrote`: this commit wrote the line; `restored`: a revert put it back (the next step
    wrote it); `promoted`: a dream acceptance carried a note's line here (the next step)."""

    def summary(self) -> str:
        """The step in words: how, by whom, where, when, which commit."""
        commit = self.commit
        parts = [_HOW[self.how], _by(commit)]
        if commit.session is not None:
            parts.append(f"session {commit.session} turn {commit.turn}")
        parts.append(commit.when.strftime("%Y-%m-%d %H:%M"))
        parts.append(commit.short)
        if commit.machine:
            parts.append(f"on {commit.machine}")
        return " · ".join(parts)

    def as_json(self) -> dict[str, object]:
        return {
            "how": self.how,
            "path": self.path,
            "line": self.line,
            "text": self.text,
            "commit": self.commit.as_json(),
        }


@dataclass(frozen=True)
class Provenance:
    """A line of a memory file and how it got there, newest step first."""

    path: str
    line: int
    text: str
    steps: tuple[Step, ...]
    unknown: str | None = None
    """Why no commit holds it (then `steps` is empty)."""

    @property
    def origin(self) -> Step | None:
        """The step that first wrote it."""
        return self.steps[-1] if self.steps else None

    def as_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "line": self.line,
            "text": self.text,
            "traced": bool(self.steps),
            "unknown": self.unknown,
            "steps": [step.as_json() for step in self.steps],
        }


_HOW: dict[Carried, str] = {
    "wrote": "written",
    "restored": "restored by a revert",
    "promoted": "promoted from a note",
}
_BY = {
    "tool": "by the model's memory tool",
    "flush": "by the flush before a compaction",
    "dream": "on a person's review of a dream",
    "user edit": "by the user in the editor",
    "outside edit": "by an edit made outside Cairn",
    "seed": "by the workspace's seed",
    "revert": "by a revert",
    "sync": "by a sync's merge",
}


def _by(commit: HistoryCommit) -> str:
    if commit.kind == "mcp" or commit.client is not None:
        return f"by MCP client {commit.client or '?'}"
    return _BY.get(commit.kind, f"by the commit {commit.subject!r}")


class ProvenanceError(Exception):
    """The line asked about cannot be looked up; the message says why."""


def traceable(root: Path, given: str) -> str:
    """The canonical name of a file whose lines can be traced: a memory file (its confinement
    rules) or one of the workspace's own root files."""
    if given in ROOT_FILES:
        path = root / given
        if path.is_symlink() or not path.is_file():
            raise ProvenanceError(f"{given} is not a file of this workspace")
        return given
    try:
        return locate(root, given)[1]
    except MemoryPathError as error:
        raise ProvenanceError(str(error)) from None


def parse_place(place: str) -> tuple[str, int]:
    """`FILE:LINE` (or a search hit's `FILE#L12`) as (file, line)."""
    match = re.fullmatch(r"(?P<path>.+?)(?::|#L)(?P<line>\d+)(?:-L?\d+)?", place.strip())
    if match is None or int(match["line"]) < 1:
        raise ProvenanceError(f"{place!r} is not FILE:LINE (e.g. MEMORY.md:12)")
    return match["path"], int(match["line"])


class Provenances:
    """Traces lines of one workspace's files through its git history."""

    def __init__(self, store: GitStore) -> None:
        self.store = store
        self._git = store.runner
        self._graphed = False

    def of(self, given: str, line: int) -> Provenance:
        """How line `line` (1-based) of file `given` got there."""
        path = traceable(self.store.root, given)
        try:
            lines = (self.store.root / path).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as error:
            raise ProvenanceError(f"{path} cannot be read: {error}") from None
        if not 1 <= line <= len(lines):
            raise ProvenanceError(f"{path} has {len(lines)} lines; there is no line {line}")
        text = lines[line - 1]
        if not self.store.exists():
            return Provenance(path, line, text, (), "the workspace has no git history")
        steps = self._steps(path, line, None)
        if not steps:
            why = "no commit holds it: an edit not committed yet"
            return Provenance(path, line, text, (), why)
        return Provenance(path, line, text, tuple(steps))

    def _steps(self, path: str, line: int, revision: str | None) -> list[Step]:
        steps: list[Step] = []
        while len(steps) < MAX_STEPS:
            blamed = self._blame(path, line, revision)
            if blamed is None:
                return steps
            sha, at, text = blamed
            info = self.store.show(sha)
            if info is None:
                return steps
            commit = history_commit(info)
            previous = self._restored(commit, path, text) or self._promoted(commit, text)
            how: Carried = "wrote"
            if previous is not None:
                how = "restored" if commit.kind == "revert" else "promoted"
            steps.append(Step(commit, path, at, text, how))
            if previous is None:
                return steps
            path, line, revision = previous
        return steps

    def _blame(self, path: str, line: int, revision: str | None) -> tuple[str, int, str] | None:
        """The commit that last changed the line, the line's number in it, and its text; None
        when it is not committed or git cannot blame it."""
        self._write_graph()
        command = ["blame", "--porcelain", "-L", f"{line},{line}"]
        if revision is not None:
            command.append(revision)
        try:
            with self.store.lock:
                done = self._git.run([*command, "--", path], check=False)
        except GitFailure:
            return None
        if done.code != 0 or not done.stdout:
            return None
        head, *rest = done.stdout.splitlines()
        sha, original = head.split()[:2]
        text = next((row[1:] for row in rest if row.startswith("\t")), "")
        return None if sha == _UNCOMMITTED else (sha, int(original), text)

    def _write_graph(self) -> None:
        """Bring the commit-graph, with its changed-path filters, up to the newest commit, once:
        a blame walks every commit since the line's, and the filters let it skip those that did
        not touch the file (a note's line in a year of history: 236 → 28 ms, bench/why.py).
        Only new commits are added (`--split`); a repository that cannot take it is blamed
        without."""
        if self._graphed:
            return
        self._graphed = True
        command = ["commit-graph", "write", "--reachable", "--changed-paths", "--split"]
        with contextlib.suppress(GitFailure):  # git locks the graph itself: commits go on
            self._git.run([*command, "--no-progress"], check=False)

    def _restored(self, commit: HistoryCommit, path: str, text: str) -> tuple[str, int, str] | None:
        """Where a revert found the line it put back: in the reverted commit's parent."""
        reverted = _REVERTS.search(commit.body) if commit.kind == "revert" else None
        if reverted is None:
            return None
        parent = f"{reverted['sha']}^"
        code, data = self._git.run_bytes(["show", f"{parent}:{path}"], ok_codes=range(129))
        if code != 0:
            return None
        lines = data.decode("utf-8", "replace").splitlines()
        return (path, lines.index(text) + 1, parent) if text in lines else None

    def _promoted(self, commit: HistoryCommit, text: str) -> tuple[str, int, str] | None:
        """The note line a dream acceptance promoted, as it was cited then."""
        source = _SOURCE.search(text) if commit.kind == "dream" else None
        if source is None:
            return None
        try:
            path = traceable(self.store.root, source["path"])
        except ProvenanceError:
            return None
        return path, int(source["line"]), commit.sha


def turn_writes(
    store: GitStore, session_id: str, turn: int, around: datetime | None = None
) -> list[HistoryCommit]:
    """The commits a turn made (its writes, its flush), oldest first; `around`: when one of
    them was made, so that only the days about it are searched."""
    if not store.exists() or not re.fullmatch(r"[0-9A-Za-z-]+", session_id):
        return []
    command = ["log", "--reverse", "--format=%H", f"--grep=^session {session_id} turn {turn}$"]
    if around is not None:
        since, until = around - timedelta(days=1), around + timedelta(days=1)
        command += [f"--since={since.isoformat()}", f"--until={until.isoformat()}"]
    with store.lock:
        done = store.runner.run(command, check=False)
    shas = done.stdout.split() if done.code == 0 else []
    return [history_commit(info) for sha in shas if (info := store.show(sha)) is not None]

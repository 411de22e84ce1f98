"""What a push would send, read object by object, as git stores it.

The commits `base..head` (all of `head`'s history when the remote has none), the path and blob
of every file each adds or changes, and the bytes of those blobs and commits. Nothing here goes
through a diff: no binary detection, no textconv, no `.gitattributes` rule (`-diff`,
`binary`, a filter) changes what is read, since `cat-file --batch` returns the objects as they
are stored, which is what a push sends; and a replace ref (`git replace`), which would show
another object in the place of the one a push sends, is ignored (`STORED`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from shell.git.runner import Git, GitFailure

STORED = {"GIT_NO_REPLACE_OBJECTS": "1"}
"""The environment of every read and write here: objects as stored, no replacement."""
_NULL = "0" * 40
_SIGNATURES = (b"gpgsig", b"gpgsig-sha256")
"""Headers of a signature over the commit's old bytes: a rewritten commit drops them."""


@dataclass(frozen=True)
class Entry:
    """One file of a tree: its mode, its object and its path (bytes, as git stores it)."""

    mode: str
    sha: str
    path: bytes

    @property
    def is_blob(self) -> bool:
        return not self.mode.startswith("160")  # 160000: a submodule's commit


@dataclass(frozen=True)
class RawCommit:
    """A commit object: its headers (tree, parents, author, committer, …) and its message."""

    sha: str
    headers: tuple[tuple[bytes, bytes], ...]
    """Each header's name and value; a value that spans lines keeps its inner newlines."""
    message: bytes

    @property
    def tree(self) -> str:
        return next(value.decode() for name, value in self.headers if name == b"tree")

    @property
    def parents(self) -> tuple[str, ...]:
        return tuple(value.decode() for name, value in self.headers if name == b"parent")

    def text(self) -> bytes:
        """What the commit says in words: every header but its tree, parents and signature
        (author and committer included), then its whole message."""
        said = [
            name + b" " + value.replace(b"\n", b"\n ")
            for name, value in self.headers
            if name not in (b"tree", b"parent", *_SIGNATURES)
        ]
        return b"\n".join([*said, b"", self.message])


def parse_commit(sha: str, raw: bytes) -> RawCommit:
    head, _, message = raw.partition(b"\n\n")
    headers: list[tuple[bytes, bytes]] = []
    for line in head.split(b"\n"):
        if line.startswith(b" ") and headers:
            name, value = headers[-1]
            headers[-1] = (name, value + b"\n" + line[1:])
        else:
            name, _, value = line.partition(b" ")
            headers.append((name, value))
    return RawCommit(sha, tuple(headers), message)


def commit_bytes(commit: RawCommit, tree: str, parents: Sequence[str], text: bytes) -> bytes:
    """The object of `commit` with another tree, parents and text (`RawCommit.text`'s form),
    without its signature."""
    said, _, message = text.partition(b"\n\n")
    lines = [b"tree " + tree.encode(), *(b"parent " + p.encode() for p in parents), said]
    return b"\n".join(lines) + b"\n\n" + message


def outgoing(git: Git, head: str, base: str | None) -> list[str]:
    """The commits `base..head`, parents before children (all of `head`'s when `base` is
    None)."""
    command = ["rev-list", "--reverse", "--topo-order", head, *([f"^{base}"] if base else [])]
    return git.run(command, env=STORED).stdout.split()


def read_objects(git: Git, shas: Iterable[str]) -> dict[str, bytes]:
    """The stored bytes of each object named (one `cat-file --batch` for all)."""
    wanted = list(dict.fromkeys(shas))
    if not wanted:
        return {}
    _, out = git.run_bytes(
        ["cat-file", "--batch"], stdin="\n".join(wanted).encode() + b"\n", env=STORED
    )
    found: dict[str, bytes] = {}
    at = 0
    for sha in wanted:
        end = out.index(b"\n", at)
        header = out[at:end].split()
        if len(header) != 3:
            raise GitFailure("error", f"git cat-file: object {sha} is missing")
        size = int(header[2])
        found[sha] = out[end + 1 : end + 1 + size]
        at = end + 1 + size + 1
    return found


def object_sizes(git: Git, shas: Iterable[str]) -> dict[str, int]:
    """The size in bytes of each object named, without reading it."""
    wanted = list(dict.fromkeys(shas))
    if not wanted:
        return {}
    _, out = git.run_bytes(
        ["cat-file", "--batch-check=%(objectname) %(objectsize)"],
        stdin="\n".join(wanted).encode() + b"\n",
        env=STORED,
    )
    sizes: dict[str, int] = {}
    for line in out.decode().splitlines():
        sha, _, size = line.partition(" ")
        if size.isdigit():
            sizes[sha] = int(size)
    return sizes


def read_commits(git: Git, shas: Sequence[str]) -> list[RawCommit]:
    objects = read_objects(git, shas)
    return [parse_commit(sha, objects[sha]) for sha in shas]


def changed_entries(git: Git, commit: RawCommit) -> list[Entry]:
    """The files `commit` adds or changes. A merge's own are those that differ from every
    parent: what it takes from one side is that side's, scanned (or pushed) with it."""
    parents = commit.parents
    if not parents:
        return _diff_tree(git, ["--root", commit.sha])
    sides = [{entry: None for entry in _diff_tree(git, [p, commit.sha])} for p in parents]
    return [entry for entry in sides[0] if all(entry in side for side in sides[1:])]


def tree_entries(git: Git, tree: str) -> list[Entry]:
    """Every file of `tree`, at any depth."""
    _, out = git.run_bytes(["ls-tree", "-r", "-z", "--full-tree", tree], env=STORED)
    entries = []
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, _kind, sha = meta.decode().split(" ")
        entries.append(Entry(mode, sha, path))
    return entries


def _diff_tree(git: Git, revisions: list[str]) -> list[Entry]:
    _, out = git.run_bytes(
        [
            "diff-tree",
            "-r",
            "-z",
            "--raw",
            "--no-renames",
            "--no-abbrev",
            "--no-commit-id",
            *revisions,
        ],
        env=STORED,
    )
    fields = out.split(b"\0")
    entries = []
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        parts = meta.decode().lstrip(":").split(" ")
        if len(parts) == 5 and parts[3] != _NULL:  # not a deletion
            entries.append(Entry(parts[1], parts[3], path))
    return entries

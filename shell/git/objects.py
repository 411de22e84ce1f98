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
_DIFF_TREE = ("diff-tree", "-r", "-z", "--raw", "--no-renames", "--no-abbrev")
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

    def text(self, *, signed: bool = False) -> bytes:
        """What the commit says in words: every header but its tree, parents and (unless
        `signed`) signature, author and committer included, then its whole message."""
        left_out = (b"tree", b"parent", *(() if signed else _SIGNATURES))
        said = [
            name + b" " + value.replace(b"\n", b"\n ")
            for name, value in self.headers
            if name not in left_out
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


def changed_entries(git: Git, commits: Sequence[RawCommit]) -> dict[str, list[Entry]]:
    """The files each of `commits` adds or changes (one `diff-tree --stdin` for all but the
    merges). A merge's own are those that differ from every parent: what it takes from one
    side is that side's, scanned (or pushed) with it."""
    found: dict[str, list[Entry]] = {commit.sha: [] for commit in commits}
    single = [commit.sha for commit in commits if len(commit.parents) < 2]
    if single:
        _, out = git.run_bytes(
            [*_DIFF_TREE, "--root", "--stdin"], stdin="\n".join(single).encode() + b"\n", env=STORED
        )
        fields, at, sha = out.split(b"\0"), 0, ""
        while at < len(fields) - 1:
            if fields[at].startswith(b":"):
                if entry := _entry(fields[at], fields[at + 1]):
                    found[sha].append(entry)
                at += 2
            else:
                sha, at = fields[at].decode().strip(), at + 1
    for commit in commits:
        if len(commit.parents) > 1:
            sides = [_diff_tree(git, [p, commit.sha]) for p in commit.parents]
            found[commit.sha] = [e for e in sides[0] if all(e in side for side in sides[1:])]
    return found


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
    _, out = git.run_bytes([*_DIFF_TREE, "--no-commit-id", *revisions], env=STORED)
    fields = out.split(b"\0")
    pairs = zip(fields[0::2], fields[1::2], strict=False)
    return [entry for meta, path in pairs if (entry := _entry(meta, path))]


def _entry(meta: bytes, path: bytes) -> Entry | None:
    """A raw diff line's new side, or None for a deletion."""
    parts = meta.decode().lstrip(":").split(" ")
    return Entry(parts[1], parts[3], path) if len(parts) == 5 and parts[3] != _NULL else None

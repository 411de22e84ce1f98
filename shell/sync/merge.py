"""Merging the remote's history so that no line is lost and no marker is ever written.

The merge is computed file by file, off to the side (a temporary index, blobs in the object
store), and reaches the working tree only as a finished commit, through a two-tree
`git read-tree -m -u`: there is never a MERGE_HEAD, an unmerged index or a file with conflict
markers, so a kill at any point leaves either the old tree or the merged one.

Per file changed on both sides:
- daily notes (`memory/**.md`, append-only) merge as the union of both sides' lines (git's
  `merge-file --union`, the same as the `merge=union` attribute the workspace's
  `.gitattributes` declares for a hand-made `git pull`), then each line is kept once, unless
  one side itself holds it more than once; blank lines are left alone;
- every other file (MEMORY.md, AGENTS.md, SOUL.md, DREAMS.md, …) takes git's clean three-way
  merge; a real conflict is handed back for review, and meanwhile the merged tree holds both
  sides' lines (the local file, then the remote's lines it lacks; each side's own removals
  stand: `held_lines`), so a merge pushed while the conflict waits drops no line of the other
  machine. Only a person's resolution
  removes a side's lines, as a commit of its own (`shell.sync.repair`). A binary file cannot
  hold both: it keeps the local version.

Without a common ancestor (two workspaces seeded apart), a file both sides added merges against
their common leading lines, so a file that one side only extended merges cleanly.
"""

from __future__ import annotations

import difflib
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from shell.git.runner import Git
from shell.memory.forget.tombstones import FILE as TOMBSTONES
from shell.memory.paths import in_memory_tree

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_ZERO = "0" * 40


@dataclass(frozen=True)
class Entry:
    """One side's change to a path since the base: its mode and blob (None: deleted)."""

    base_blob: str | None
    mode: str
    blob: str | None


@dataclass(frozen=True)
class Conflict:
    """A file whose two versions did not merge.

    `held`: the merged tree holds both sides' lines (else, a binary file, the local version);
    `local_only` and `remote_only` are the lines one side has and the other lacks, which a
    resolution removes (take remote removes `local_only`, take local `remote_only`).
    """

    file: str
    local_text: bytes | None
    remote_text: bytes | None
    diff: str
    held: bool = False
    local_only: tuple[str, ...] = ()
    remote_only: tuple[str, ...] = ()


@dataclass
class MergeBuild:
    """The merged tree and what did not merge."""

    tree: str
    conflicts: list[Conflict] = field(default_factory=list)


def is_daily_note(path: str) -> bool:
    """Whether `path` is an append-only note under `memory/` (merged as a union of lines)."""
    return in_memory_tree(path) and path.lower().endswith(".md")


def changes(git: Git, base: str, commit: str) -> dict[str, Entry]:
    """What `commit` changed since `base` (a commit or a tree), path by path."""
    _, raw = git.run_bytes(["diff", "--raw", "-z", "--no-renames", "--no-abbrev", base, commit])
    fields = raw.decode("utf-8", "surrogateescape").split("\0")
    found: dict[str, Entry] = {}
    for header, path in zip(fields[0::2], fields[1::2], strict=False):
        if not header.startswith(":"):
            continue
        _, new_mode, old_blob, new_blob, _status = header[1:].split(" ")
        found[path] = Entry(
            base_blob=None if old_blob == _ZERO else old_blob,
            mode=new_mode,
            blob=None if new_blob == _ZERO else new_blob,
        )
    return found


def build_merge(git: Git, git_dir: Path, head: str, incoming: str, base: str | None) -> MergeBuild:
    """The tree of `head` merged with `incoming` (from `base`, their merge base; None when
    their histories are unrelated), and the files that kept the local version."""
    local = changes(git, base or EMPTY_TREE, head)
    remote = changes(git, base or EMPTY_TREE, incoming)
    updates: dict[str, tuple[str, str | None]] = {}
    both: list[str] = []
    for path, theirs in remote.items():
        ours = local.get(path)
        if ours is None:
            updates[path] = (theirs.mode, theirs.blob)
        elif (ours.mode, ours.blob) != (theirs.mode, theirs.blob):
            both.append(path)
    conflicts: list[Conflict] = []
    if both:
        blobs = read_blobs(git, _needed(both, local, remote))
        with tempfile.TemporaryDirectory(prefix="cairn-merge-") as scratch:
            for path in both:
                merged, conflict = _merge_file(
                    git, Path(scratch), path, local[path], remote[path], blobs
                )
                if conflict is not None:
                    conflicts.append(conflict)
                if merged is not None:
                    updates[path] = merged
    tree = _write_tree(git, git_dir, head, updates)
    return MergeBuild(tree=tree, conflicts=conflicts)


def _needed(paths: list[str], local: dict[str, Entry], remote: dict[str, Entry]) -> set[str]:
    wanted: set[str] = set()
    for path in paths:
        for entry in (local[path], remote[path]):
            wanted.update(blob for blob in (entry.base_blob, entry.blob) if blob)
    return wanted


def read_blobs(git: Git, shas: set[str]) -> dict[str, bytes]:
    """The content of each blob, read by one `git cat-file --batch`."""
    if not shas:
        return {}
    order = sorted(shas)
    _, output = git.run_bytes(
        ["cat-file", "--batch"], stdin="".join(f"{s}\n" for s in order).encode()
    )
    blobs: dict[str, bytes] = {}
    at = 0
    for sha in order:
        end = output.index(b"\n", at)
        header = output[at:end].split(b" ")
        size = int(header[2])
        blobs[sha] = output[end + 1 : end + 1 + size]
        at = end + 1 + size + 1
    return blobs


def _merge_file(
    git: Git,
    scratch: Path,
    path: str,
    ours: Entry,
    theirs: Entry,
    blobs: dict[str, bytes],
) -> tuple[tuple[str, str | None] | None, Conflict | None]:
    """(the path's merged mode and blob, or None to keep the local one; the conflict if any)."""
    local = blobs[ours.blob] if ours.blob else None
    remote = blobs[theirs.blob] if theirs.blob else None
    note = is_daily_note(path) or path == TOMBSTONES  # both sides' tombstones stand
    if local is None or remote is None:  # deleted on one side, changed on the other
        kept = (theirs.mode, theirs.blob) if local is None else None  # the lines that exist
        return kept, None if note else _conflict(path, local, remote, held=True)
    if b"\0" in local or b"\0" in remote:
        return None, _conflict(path, local, remote, held=False)
    base_sha = ours.base_blob if ours.base_blob == theirs.base_blob else None
    base = blobs[base_sha] if base_sha else _common_head(local, remote)
    files: list[str] = []
    for name, data in (("local", local), ("base", base), ("remote", remote)):
        file = scratch / f"{len(files)}-{name}"
        file.write_bytes(data)
        files.append(str(file))
    args = ["merge-file", "-p", "-L", "local", "-L", "base", "-L", "remote"]
    code, merged = git.run_bytes(
        [*args, "--union", *files] if note else [*args, *files], ok_codes=range(0, 128)
    )
    conflict = None
    if note:
        merged = keep_once(merged, local, remote)
    elif code != 0:
        pruned = only_removed(base, remote, local)
        if pruned is None:
            pruned = only_removed(base, local, remote)
        if pruned is not None:
            merged = pruned
        else:
            merged = held_lines(base, local, remote)
            conflict = _conflict(path, local, remote, held=True)
    if merged == local:
        return None, conflict
    _, blob = git.run_bytes(["hash-object", "-w", "--stdin"], stdin=merged)
    return (ours.mode, blob.decode().strip()), conflict


def only_removed(base: bytes, pruned: bytes, other: bytes) -> bytes | None:
    """`other` without the lines `pruned` removed from `base`, when removing them is all that
    `pruned` did and `other` still holds them: a deletion beside the other side's edits (a
    resolution next to a line appended meanwhile) merges cleanly. None when it does not apply."""
    gone = Counter(_keys(base)) - Counter(_keys(pruned))
    if not gone or Counter(_keys(pruned)) - Counter(_keys(base)):
        return None
    if Counter(_keys(other)) & gone != gone:
        return None
    out = []
    for line in other.splitlines(keepends=True):
        key = line.rstrip(b"\r\n")
        if gone[key] > 0:
            gone[key] -= 1
            continue
        out.append(line)
    return b"".join(out)


def held_lines(base: bytes, local: bytes, remote: bytes) -> bytes:
    """What a conflict waiting for review holds: the local lines but those the remote removed
    since `base`, then the remote's lines the local side lacks but those it removed. Each side's
    committed removals stand, as in a clean merge; no other line of either side is dropped (nor
    is a line one side removed brought back by the other's copy)."""
    counted = Counter(key for key in _keys(base) if key.strip())
    gone = counted - Counter(_keys(remote))
    kept = []
    for line in local.splitlines(keepends=True):
        key = line.rstrip(b"\r\n")
        if gone[key] > 0:
            gone[key] -= 1
            continue
        kept.append(line)
    return union_of(b"".join(kept), remote, skip=set(counted - Counter(_keys(local))))


def union_of(local: bytes, remote: bytes, skip: set[bytes] | None = None) -> bytes:
    """`local`, then the non-blank lines of `remote` that `local` lacks (and `skip` does not
    name), in their order."""
    have = set(_keys(local)) | (skip or set())
    extra = [
        line if line.endswith(b"\n") else line + b"\n"
        for line in remote.splitlines(keepends=True)
        if line.strip() and line.rstrip(b"\r\n") not in have
    ]
    if not extra:
        return local
    return local + (b"" if not local or local.endswith(b"\n") else b"\n") + b"".join(extra)


def only_in(data: bytes | None, other: bytes | None) -> tuple[str, ...]:
    """The non-blank lines of `data` that `other` lacks, each once, as text."""
    lacking = set(_keys(other or b""))
    found: dict[str, None] = {}
    for key in _keys(data or b""):
        if key.strip() and key not in lacking:
            found.setdefault(key.decode("utf-8", "surrogateescape"))
    return tuple(found)


def keep_once(merged: bytes, local: bytes, remote: bytes) -> bytes:
    """The union `merged` with each non-blank line kept as many times as the side that holds it
    most often (a line both sides appended is kept once)."""
    allowed = Counter(_keys(local)) | Counter(_keys(remote))
    seen: Counter[bytes] = Counter()
    out = []
    for line in merged.splitlines(keepends=True):
        key = line.rstrip(b"\r\n")
        if key.strip():
            seen[key] += 1
            if seen[key] > allowed[key]:
                continue
        out.append(line if line.endswith(b"\n") else line + b"\n")
    return b"".join(out)


def _keys(data: bytes) -> list[bytes]:
    return [line.rstrip(b"\r\n") for line in data.splitlines()]


def _common_head(local: bytes, remote: bytes) -> bytes:
    """The leading lines both versions share: the base of a file both sides added."""
    shared = []
    for ours, theirs in zip(
        local.splitlines(keepends=True), remote.splitlines(keepends=True), strict=False
    ):
        if ours != theirs:
            break
        shared.append(ours)
    return b"".join(shared)


def _conflict(path: str, local: bytes | None, remote: bytes | None, *, held: bool) -> Conflict:
    def lines(data: bytes | None) -> list[str]:
        return (data or b"").decode("utf-8", "replace").splitlines(keepends=True)

    diff = "".join(
        difflib.unified_diff(lines(local), lines(remote), f"local/{path}", f"remote/{path}")
    )
    return Conflict(
        file=path,
        local_text=local,
        remote_text=remote,
        diff=diff,
        held=held,
        local_only=only_in(local, remote) if held else (),
        remote_only=only_in(remote, local) if held else (),
    )


def _write_tree(
    git: Git, git_dir: Path, head: str, updates: dict[str, tuple[str, str | None]]
) -> str:
    """`head`'s tree with `updates` applied, written through a temporary index."""
    index = git_dir / "cairn-sync-index"
    env = {"GIT_INDEX_FILE": str(index)}
    try:
        git.run(["read-tree", head], env=env)
        if updates:
            lines = "".join(
                f"{mode} {blob}\t{path}\n" if blob else f"0 {_ZERO}\t{path}\n"
                for path, (mode, blob) in sorted(updates.items())
            )
            git.run(
                ["update-index", "-z", "--index-info"], stdin=lines.replace("\n", "\0"), env=env
            )
        return git.run(["write-tree"], env=env).stdout.strip()
    finally:
        index.unlink(missing_ok=True)

"""Rewriting commits not pushed yet with some of their bytes replaced, by plumbing only.

Each commit, parents first, gets its tree rebuilt in a private index (`GIT_INDEX_FILE`:
`update-index --index-info`, `write-tree`) with the replaced blobs and paths, then a new commit
object with the same author, committer, dates and everything else it said, through the given
text edit (`hash-object -t commit -w`, which checks the object as `commit-tree` would; a
signature over the old bytes is dropped). Nothing moves: the caller points HEAD at the new
commits (`shell.sync.redact`). What to replace is the caller's: this module knows nothing of
secrets.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from shell.git.objects import STORED, RawCommit, commit_bytes, tree_entries
from shell.git.runner import Git, GitFailure


def rewrite_commits(
    git: Git,
    commits: Sequence[RawCommit],
    *,
    blobs: Mapping[str, bytes],
    paths: Mapping[bytes, bytes],
    text: Callable[[bytes], bytes],
    rewritten: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """New objects for `commits` (parents before children): each blob named in `blobs` holds
    its new bytes, each path named in `paths` its new name, and each commit's text (its
    `RawCommit.text`) goes through `text`. A commit whose parents are not among `commits`
    keeps them. Returns each old commit's new sha: the same when nothing of it changes (its
    signature included, seen through `text`), else a new commit without the signature.
    `rewritten`: commits an earlier call rewrote the same way (old sha → new), the parents of
    some of `commits`: they are not done again."""
    written = {sha: _write_blob(git, data) for sha, data in blobs.items()}
    renamed: dict[str, str] = dict(rewritten or {})
    with tempfile.TemporaryDirectory(prefix="cairn-rewrite-") as folder:
        index = Path(folder) / "index"
        for commit in commits:
            if commit.sha in renamed:
                continue
            tree = _tree(git, commit.tree, written, paths, index)
            parents = [renamed.get(parent, parent) for parent in commit.parents]
            signed = commit.text(signed=True)
            if (tree, tuple(parents), text(signed)) == (commit.tree, commit.parents, signed):
                renamed[commit.sha] = commit.sha  # nothing of it changes: signature and all
                continue
            raw = commit_bytes(commit, tree, parents, text(commit.text()))
            command = ["hash-object", "-t", "commit", "-w", "--stdin"]
            _, out = git.run_bytes(command, stdin=raw, env=STORED)
            renamed[commit.sha] = out.decode().strip()
    return renamed


def _tree(
    git: Git, tree: str, blobs: Mapping[str, str], paths: Mapping[bytes, bytes], index: Path
) -> str:
    entries = tree_entries(git, tree)
    if not any(e.sha in blobs or e.path in paths for e in entries):
        return tree
    lines: dict[bytes, bytes] = {}
    for entry in entries:
        path = paths.get(entry.path, entry.path)
        if path in lines:
            shown = path.decode("utf-8", "replace")
            raise GitFailure("error", f"two files would be named {shown} after the rewrite")
        sha = blobs.get(entry.sha, entry.sha)
        lines[path] = f"{entry.mode} {sha}\t".encode() + path
    index.unlink(missing_ok=True)
    env = {**STORED, "GIT_INDEX_FILE": str(index)}
    git.run_bytes(
        ["update-index", "-z", "--index-info"], stdin=b"\0".join(lines.values()) + b"\0", env=env
    )
    _, out = git.run_bytes(["write-tree"], env=env)
    return out.decode().strip()


def _write_blob(git: Git, data: bytes) -> str:
    _, out = git.run_bytes(
        ["hash-object", "-t", "blob", "-w", "--stdin", "--no-filters"], stdin=data, env=STORED
    )
    return out.decode().strip()

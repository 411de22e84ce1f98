"""Fetching the remote's head, refusing a rewritten history, and taking in a merge.

The fetch lands in a private ref (`refs/cairn/sync/incoming`), so a remote whose history was
rewritten is refused before anything visible moves: the remote-tracking ref, HEAD and the
working tree stay as they were. The merged commit reaches the working tree by a two-tree
`read-tree -m -u` and then HEAD by a compare-and-swap `update-ref`; a journal written before
and removed after tells `recover()` what to restore if a kill falls in between.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from shell.git.runner import Git, GitFailure, classify, one_line
from shell.memory.paths import is_memory_file
from shell.sync.merge import Conflict, build_merge
from shell.sync.state import SYNC_DIR

INCOMING = "refs/cairn/sync/incoming"
JOURNAL = f"{SYNC_DIR}/merge.json"
HELD = "Cairn-Held"
"""The trailer of a merge commit that holds both sides of a conflict waiting for review."""


@dataclass
class Pulled:
    """What came in, summed over a sync's attempts."""

    commits: int = 0
    files: set[str] = field(default_factory=set)
    lines_added: int = 0
    lines_removed: int = 0
    conflicts: list[tuple[Conflict, str, str]] = field(default_factory=list)
    """Each conflict with the local and the remote commit it was found between."""

    @property
    def changed(self) -> list[str]:
        """The memory files the pull changed (to re-index)."""
        return sorted(name for name in self.files if is_memory_file(name))


def fetch(
    git: Git,
    remote: str,
    branch: str,
    previous: str | None,
    accept: Callable[[str, str], bool] | None = None,
) -> str | None:
    """Fetch the remote's `branch`; return its head, or None when the remote has no such
    branch yet. Raises GitFailure: kind "rewritten" when `previous` (the head fetched last
    time) is not an ancestor of the new head, unless `accept(previous, head)` says the rewrite
    is one it knows (a forget: `shell.sync.forgotten`); nothing is changed then."""
    done = git.run(
        [
            "fetch",
            "--no-tags",
            "--no-write-fetch-head",
            "--no-auto-maintenance",
            "--quiet",
            "--refmap=",  # leave refs/remotes/ alone until the new head is accepted
            remote,
            f"+refs/heads/{branch}:{INCOMING}",
        ],
        network=True,
        check=False,
    )
    if done.code != 0:
        if "couldn't find remote ref" in done.stderr.lower():
            if previous:
                raise GitFailure(
                    "rewritten",
                    f"the remote's branch {branch} is gone (it had {previous[:10]}); nothing "
                    "was merged or pushed: check the remote, then add it again to accept it",
                )
            return None
        raise GitFailure(classify(done.stderr), f"fetch failed: {one_line(done.stderr)}")
    head = git.rev(INCOMING)
    if head is None:
        raise GitFailure("error", "fetch gave no commit")
    if (
        previous
        and previous != head
        and not git.is_ancestor(previous, head)
        and not (accept is not None and accept(previous, head))
    ):
        git.run(["update-ref", "-d", INCOMING], check=False)
        raise GitFailure(
            "rewritten",
            f"the remote's history was rewritten (force-pushed): its {branch} at {head[:10]} "
            f"no longer contains {previous[:10]}, fetched before; nothing was merged or "
            "pushed: check the remote, then add it again to accept its new history",
        )
    return head


def take_in(
    git: Git,
    root: Path,
    git_dir: Path,
    incoming: str,
    *,
    message: str,
    allow_unrelated: bool,
    pulled: Pulled,
) -> str:
    """Merge `incoming` into HEAD (the caller holds the commit lock), add what came in to
    `pulled`, and return the new HEAD. A conflicting curated file holds both sides' lines, and
    the merge commit says so in a `Cairn-Held` trailer, for the other machines."""
    head = git.rev("HEAD")
    if head is None:
        raise GitFailure("error", "this workspace has no commit yet: initialise it first")
    if head == incoming:
        return head
    base = git.run(["merge-base", head, incoming], check=False).stdout.strip() or None
    if base == incoming:
        return head
    if base is None and not allow_unrelated:
        raise GitFailure(
            "rewritten",
            "the remote's history shares no commit with this workspace; nothing was merged: "
            "add the remote again to merge the two histories",
        )
    conflicts: list[Conflict] = []
    if base == head:
        new = incoming  # a fast-forward
    else:
        built = build_merge(git, git_dir, head, incoming, base)
        conflicts = built.conflicts
        held = "\n".join(f"{HELD}: {c.file}" for c in conflicts if c.held)
        new = git.run(
            [
                "commit-tree",
                built.tree,
                "-p",
                head,
                "-p",
                incoming,
                "-m",
                f"{message}\n\n{held}" if held else message,
            ],
            env=git.identity_env(),
        ).stdout.strip()
    journal = root / JOURNAL
    journal.parent.mkdir(parents=True, exist_ok=True)
    journal.write_text(json.dumps({"old": head, "new": new}), encoding="utf-8")
    try:
        git.run(["read-tree", "-m", "-u", head, new])
    except GitFailure as failure:
        journal.unlink(missing_ok=True)
        raise GitFailure(
            "error", f"the merge could not update the working tree: {failure}"
        ) from None
    git.run(["update-ref", "-m", "cairn sync", "HEAD", new, head])
    journal.unlink(missing_ok=True)
    pulled.commits += int(git.out("rev-list", "--count", f"{head}..{incoming}"))
    _count_changes(git, head, new, pulled)
    pulled.conflicts.extend((conflict, head, incoming) for conflict in conflicts)
    return new


def _count_changes(git: Git, old: str, new: str, pulled: Pulled) -> None:
    output = git.run(["diff", "--numstat", "-z", "--no-renames", old, new]).stdout
    for record in output.split("\0"):
        parts = record.split("\t")
        if len(parts) != 3:
            continue
        added, removed, name = parts
        pulled.files.add(name)
        pulled.lines_added += int(added) if added.isdigit() else 0
        pulled.lines_removed += int(removed) if removed.isdigit() else 0

"""Joining a remote: which of its branches the memory lives on, and the clone of a second machine.

The rule (`choose_branch`), the same for `cairn init --remote` and `cairn remote add`:

1. the branch named with `--branch`, whether the remote has it yet or not;
2. else the branch the remote's HEAD names, when it has commits;
3. else the one branch that has commits;
4. several have commits and HEAD names none of them: refused, naming them, before anything
   changes (choose with `--branch`);
5. no branch has commits (an empty remote): the branch its HEAD names though unborn (`git init
   --bare` makes it `master`), so that a plain `git clone` of the remote checks the memory out;
   when the remote does not say (a server older than git 2.31), the local branch (`main`).

The workspace then tracks that branch by name (`SavedState.branch`): the local branch keeps
its own name after `cairn remote add`, and takes the remote's after a clone.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from shell.events.sync import SyncCloned, SyncEvent, SyncFailed
from shell.git.runner import Git, GitFailure, classify, one_line, redact_url
from shell.sync.prepare import ensure_ignored
from shell.sync.state import SavedState, save_state

HEADS = "refs/heads/"


@dataclass(frozen=True)
class RemoteBranches:
    """What `git ls-remote` says of a remote's branches."""

    heads: dict[str, str]
    """Every branch with commits, and its head."""
    head_branch: str | None
    """The branch the remote's HEAD names, when it has commits."""


@dataclass(frozen=True)
class BranchChoice:
    """The remote branch a workspace syncs with, and its head (None: no commit there yet)."""

    branch: str
    head: str | None


def list_branches(git: Git, url: str) -> RemoteBranches:
    """The remote's branches; raises GitFailure (offline, auth, error) when it cannot be read."""
    done = git.run(["ls-remote", "--symref", url, "HEAD", f"{HEADS}*"], network=True, check=False)
    if done.code != 0:
        raise GitFailure(classify(done.stderr), f"ls-remote failed: {one_line(done.stderr)}")
    heads: dict[str, str] = {}
    named = head_sha = None
    for line in done.stdout.splitlines():
        value, _, ref = line.partition("\t")
        if ref == "HEAD" and value.startswith(f"ref: {HEADS}"):
            named = value.removeprefix(f"ref: {HEADS}")
        elif ref == "HEAD":
            head_sha = value
        elif ref.startswith(HEADS):
            heads[ref.removeprefix(HEADS)] = value
    if named is None and head_sha is not None:
        # A server that does not name HEAD's branch: the one branch at HEAD's commit, if any.
        at_head = [name for name, sha in heads.items() if sha == head_sha]
        named = at_head[0] if len(at_head) == 1 else None
    return RemoteBranches(heads=heads, head_branch=named if named in heads else None)


def choose_branch(git: Git, url: str, *, wanted: str | None, fallback: str) -> BranchChoice:
    """The remote branch to sync with, by the module's rule; raises GitFailure: the remote's
    own failure when it cannot be read, kind "error" when the rule refuses."""
    if wanted is not None:
        checked = git.run(["check-ref-format", "--branch", wanted], check=False)
        if checked.code or checked.stdout.strip() != wanted:  # `@{-1}` would be expanded
            raise GitFailure("error", f"{wanted!r} is not a branch name; nothing was changed")
    found = list_branches(git, url)
    if wanted is not None:
        return BranchChoice(wanted, found.heads.get(wanted))
    if found.head_branch is not None:
        return BranchChoice(found.head_branch, found.heads[found.head_branch])
    if len(found.heads) == 1:
        [(branch, head)] = found.heads.items()
        return BranchChoice(branch, head)
    if found.heads:
        names = ", ".join(sorted(found.heads))
        raise GitFailure(
            "error",
            f"the remote's HEAD names none of its {len(found.heads)} branches with commits "
            f"({names}): choose one with --branch NAME (cairn remote add, cairn init --remote); "
            "nothing was changed",
        )
    return BranchChoice(unborn_head(git, url, fallback), None)


def unborn_head(git: Git, url: str, fallback: str) -> str:
    """The branch an empty remote's HEAD names (git says it to a clone, not to ls-remote), or
    `fallback` when the remote does not say."""
    with tempfile.TemporaryDirectory(prefix="cairn-probe-") as scratch:
        probe = Path(scratch) / "probe.git"
        git.run(
            ["-c", f"init.defaultBranch={fallback}", "clone", "--bare", "--quiet", url, str(probe)],
            network=True,
        )
        ref = Git(probe).run(["symbolic-ref", "--quiet", "HEAD"], check=False).stdout.strip()
    return ref.removeprefix(HEADS) if ref.startswith(HEADS) else fallback


def clone_workspace(url: str, directory: Path, *, branch: str | None = None) -> list[SyncEvent]:
    """Clone the workspace at `url` into `directory` (absent or empty), ready to sync.

    The branch is chosen by the module's rule (`branch`: the `--branch` asked for); when the
    rule refuses, nothing is made. A branch without commits gives an empty repository on it:
    seed it (`init_workspace`) and sync to publish it. The caller seeds any file the remote
    lacks either way.
    """
    target = Path(directory).resolve()
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        return [SyncFailed(kind="error", message=f"{target} exists and is not empty")]
    outside = Git(None)
    try:
        choice = choose_branch(outside, url, wanted=branch, fallback="main")
        target.parent.mkdir(parents=True, exist_ok=True)
        how = ["--branch", choice.branch] if choice.head else ["--no-checkout"]
        outside.run(
            ["clone", "--quiet", "--origin", "origin", *how, url, str(target)], network=True
        )
    except GitFailure as failure:
        return [SyncFailed(kind=failure.kind, message=redact_url(f"join {url}: {failure.message}"))]
    git = Git(target)
    head = git.rev("HEAD")
    if choice.head is None:
        git.run(["symbolic-ref", "HEAD", f"{HEADS}{choice.branch}"])
        head = None
    ensure_ignored(target, Path(git.out("rev-parse", "--absolute-git-dir")))
    save_state(target, SavedState(remote_head=head, branch=choice.branch))
    commits = int(git.out("rev-list", "--count", "HEAD")) if head else 0
    return [SyncCloned(url=redact_url(url), directory=str(target), commits=commits)]

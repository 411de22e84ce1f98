"""Joining a second machine: the workspace cloned from its remote."""

from __future__ import annotations

from pathlib import Path

from shell.events.sync import SyncCloned, SyncEvent, SyncFailed
from shell.git.runner import Git, GitFailure, redact_url
from shell.sync.prepare import ensure_ignored
from shell.sync.state import SavedState, save_state


def clone_workspace(url: str, directory: Path) -> list[SyncEvent]:
    """Clone the workspace at `url` into `directory` (absent or empty), ready to sync.

    An empty remote gives an empty repository on branch `main`: seed it (`init_workspace`)
    and sync to publish it. The caller seeds any file the remote lacks either way.
    """
    target = Path(directory).resolve()
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        return [SyncFailed(kind="error", message=f"{target} exists and is not empty")]
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        Git(target.parent).run(
            ["clone", "--quiet", "--origin", "origin", url, str(target)], network=True
        )
    except GitFailure as failure:
        return [
            SyncFailed(kind=failure.kind, message=redact_url(f"clone of {url}: {failure.message}"))
        ]
    git = Git(target)
    head = git.rev("HEAD")
    if head is None:
        git.run(["symbolic-ref", "HEAD", "refs/heads/main"])
    ensure_ignored(target, Path(git.out("rev-parse", "--absolute-git-dir")))
    save_state(target, SavedState(remote_head=head))
    commits = int(git.out("rev-list", "--count", "HEAD")) if head else 0
    return [SyncCloned(url=redact_url(url), directory=str(target), commits=commits)]

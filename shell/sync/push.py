"""One push of the memory's branch, and what a refusal means: the remote moved (try again after a
fetch and merge), or something else (a failure the sync reports)."""

from __future__ import annotations

from shell.git.runner import Git, GitFailure, classify, one_line

REMOTE = "origin"
"""What every workspace calls its memory's remote."""


def push_head(git: Git, branch: str, head: str, *, lease: str | None = None) -> bool:
    """Push `head`; False when the remote moved meanwhile (non-fast-forward, or away from
    `lease`: a purged history replaces the remote's only while it is still at `lease`)."""
    forced = [f"--force-with-lease=refs/heads/{branch}:{lease}"] if lease else []
    done = git.run(
        ["push", "--porcelain", "--no-verify", *forced, REMOTE, f"{head}:refs/heads/{branch}"],
        network=True,
        check=False,
    )
    if done.code == 0:
        return True
    said = f"{done.stdout}\n{done.stderr}".lower()
    if "[rejected]" in said or "non-fast-forward" in said or "fetch first" in said:
        return False
    if "stale info" in said:
        return False
    if "[remote rejected]" in said:
        raise GitFailure(
            "error", f"push refused by the remote: {one_line(done.stdout + done.stderr)}"
        )
    raise GitFailure(classify(done.stderr), f"push failed: {one_line(done.stderr)}")

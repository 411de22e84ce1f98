"""Unblocking a push stopped by a secret: the commits not pushed yet, rewritten without it.

Deleting the line is a new commit, and the secret stays in the history a push sends; so the
commits after the remote's head are rewritten instead (`shell.git.rewrite`), every blob,
file name and commit text that holds a secret redacted as a memory write would be
(`[REDACTED <kind>]`), authors and dates kept. The pushed commits are never touched: the
caller has fetched and checked that the remote still is where this workspace last merged it.
HEAD moves by compare-and-swap once the working tree holds the new files, with the merge's
journal (`shell.sync.pull.JOURNAL`) so a kill in between is undone at the next start.
"""

from __future__ import annotations

import json
from pathlib import Path

from shell.events.sync import SyncEvent, SyncFailed, SyncRedacted, SyncRedactionPreviewed
from shell.git.rewrite import rewrite_commits
from shell.git.runner import Git, GitFailure
from shell.secrets.blobs import TOO_BIG, redacted, redacted_name
from shell.secrets.push_scan import OutgoingScan, SecretFinding, describe_findings, scan_commits
from shell.sync.pull import JOURNAL

REASON = "cairn sync: the commits not pushed yet, rewritten with their secrets redacted"


def finding_line(finding: SecretFinding) -> str:
    """One line of the preview: commit, where, kind, and the line with the secret masked."""
    commit, kind, masked = finding.commit[:10], finding.kind, finding.masked
    if finding.where == "name":
        return f"{commit} file name {finding.file} · {kind}"
    if finding.where == "message":
        return f"{commit} commit message, line {finding.line} · {kind}: {masked}"
    if finding.where == "identity":
        return f"{commit} commit header, line {finding.line} · {kind}: {masked}"
    if kind == TOO_BIG:
        return f"{commit} {finding.file} · {kind}: {masked}"
    return f"{commit} {finding.file}:{finding.line} · {kind}: {masked}"


def preview(scan: OutgoingScan, base: str | None, hint: str) -> SyncRedactionPreviewed:
    return SyncRedactionPreviewed(
        base=base,
        commits=len(scan.commits),
        findings=[finding_line(finding) for finding in scan.findings],
        hint=hint if scan.findings else "",
    )


def redact_outgoing(
    git: Git, root: Path, head: str, base: str | None, scan: OutgoingScan
) -> list[SyncEvent]:
    """Rewrite `base..head` as `scan` found it, move HEAD and the working tree to the result
    (the caller holds the repository's lock), and scan again: a SyncFailed after the
    SyncRedacted says what the redaction could not take out."""
    if too_big := [f for f in scan.findings if f.kind == TOO_BIG]:
        return [
            SyncFailed(
                "secret",
                f"{too_big[0].file} is too big for the scan, so Cairn neither pushes nor "
                "rewrites it: take it out of the commits not pushed yet with git itself",
            )
        ]
    renamed = rewrite_commits(
        git,
        scan.commits,
        blobs={sha: redacted(data) for sha, data in scan.blobs.items()},
        paths={path: redacted_name(path) for path in scan.names},
        text=redacted,
    )
    new = renamed.get(head, head)
    changed = sum(1 for old, made in renamed.items() if old != made)
    files = move_head(git, root, head, new)
    done = SyncRedacted(commits=changed, head=new, files=files)
    if left := scan_commits(git, new, base).findings:
        return [done, SyncFailed("secret", "after the rewrite, still: " + describe_findings(left))]
    return [done]


def move_head(git: Git, root: Path, old: str, new: str, reason: str = REASON) -> list[str]:
    """The working tree from `old` to `new`, then HEAD (a compare-and-swap, with the merge's
    journal so a kill in between is undone at the next start); the files that changed. Also
    how a forget moves to its purged history (`shell.sync.forgotten`)."""
    dirty = git.run(["status", "--porcelain=v1", "-z", "--untracked-files=no"]).stdout
    if names := sorted({entry[3:] for entry in dirty.split("\0") if len(entry) > 3}):
        raise GitFailure(
            "error",
            f"not rewritten: {', '.join(names)} differ from the last commit; sync (which "
            "commits them) and try again",
        )
    listed = git.run(["diff", "--name-only", "-z", "--no-renames", old, new]).stdout
    files = [name for name in listed.split("\0") if name]
    journal = root / JOURNAL
    journal.parent.mkdir(parents=True, exist_ok=True)
    journal.write_text(json.dumps({"old": old, "new": new}), encoding="utf-8")
    try:
        git.run(["read-tree", "-m", "-u", old, new])
        moved = git.run(["update-ref", "-m", reason, "HEAD", new, old], check=False)
        if moved.code != 0:
            git.run(["read-tree", "-m", "-u", new, old])
            raise GitFailure("error", "not rewritten: HEAD moved meanwhile; try again")
    finally:
        journal.unlink(missing_ok=True)
    return files


def not_rewritten_moved(remote_head: str | None, known: str | None) -> SyncFailed:
    """The refusal of a redaction when the remote is not where this workspace last merged it."""
    at = remote_head[:10] if remote_head else "no commit"
    was = known[:10] if known else "never fetched"
    return SyncFailed(
        "error",
        f"not rewritten: the remote is at {at}, and this workspace has not merged it (its "
        f"last sync saw {was}); sync first (which merges it, then stops at the secret again), "
        "then redact: only the commits after the remote's head are ever rewritten",
    )

"""What a sync event says in one line, for every front end (the transcript, `cairn sync`)."""

from __future__ import annotations

from shell.events import (
    Event,
    SyncCloned,
    SyncConflict,
    SyncFailed,
    SyncFinished,
    SyncForgotten,
    SyncRecovered,
    SyncRedacted,
    SyncRedactionPreviewed,
    SyncRemoteAdded,
    SyncResolved,
)
from shell.text import counted, line_change, short_sha


def sync_line(event: Event) -> str | None:
    """One line for a sync event (`shell.sync`), as the transcript and `cairn sync` say it."""
    match event:
        case SyncRemoteAdded(url=url):
            return f"remote set: {url}"
        case SyncCloned(url=url, directory=directory, commits=commits):
            return f"cloned {url} into {directory} ({counted(commits, 'commit')})"
        case SyncFinished():
            came = (
                f"{counted(event.pulled_commits, 'commit')} in ({counted(event.files, 'file')}, "
                f"{line_change(event.lines_added, event.lines_removed)})"
                if event.pulled_commits
                else "nothing new in"
            )
            conflicts = f"; {counted(len(event.conflicts), 'conflict')} to review" * bool(
                event.conflicts
            )
            return f"synced: {came}, {counted(event.pushed_commits, 'commit')} out{conflicts}"
        case SyncConflict(file=file, side_file=side):
            return (
                f"sync conflict in {file}: kept yours, with the remote's lines after them until "
                f"you choose (what is pushed meanwhile holds both); the remote's is in {side}"
            )
        case SyncFailed(kind=kind, message=message):
            return f"sync failed ({kind}): {message}"
        case SyncResolved(file=file, take=take, commit=commit):
            return f"resolved {file}: took {take}" + (f" ({short_sha(commit)})" if commit else "")
        case SyncRecovered(detail=detail):
            return f"recovered an interrupted sync: {detail}"
        case SyncRedactionPreviewed(commits=commits, findings=found):
            if not found:
                unpushed = counted(commits, "commit")
                return f"nothing to redact: the {unpushed} not pushed yet hold no secret"
            return (
                f"redacting would rewrite the {counted(commits, 'commit')} not pushed yet, "
                f"{counted(len(found), 'secret')} masked; the pushed commits stay as they are"
            )
        case SyncForgotten(commits=commits, unpushed_commits=unpushed, files=files):
            mine = f", {unpushed} of them not pushed yet" * bool(unpushed)
            return (
                f"forgotten lines purged here: {counted(commits, 'commit')} rewritten{mine}, "
                f"{counted(len(files), 'file')} changed; their tombstones keep them out"
            )
        case SyncRedacted(commits=commits, head=head):
            return (
                f"rewrote {counted(commits, 'commit')} not pushed yet with their secrets "
                f"redacted (HEAD {short_sha(head)}); the pushed commits are untouched"
            )
    return None


def redaction_preview(event: SyncRedactionPreviewed) -> str:
    """The preview in full: its line, one line per secret (commit, where, kind, the line with
    the secret masked), and how to apply it."""
    lines = [sync_line(event) or "", *(f"  {line}" for line in event.findings)]
    return "\n".join([*lines, event.hint] if event.hint else lines)

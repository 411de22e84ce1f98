"""One commit of the memory as the history shows it: its kind, and the session and turn, or the
MCP client, that made it, read back from its message (`shell.git.history`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from shell.git.store import CommitInfo

_ORIGIN = re.compile(r"^session (?P<session>[0-9A-Za-z-]+) turn (?P<turn>\d+)$", re.MULTILINE)
"""The line Cairn writes in a turn's commit body (`Conversation.origin`): a whole line, the last
of its kind, so a subject or a reason quoting "session … turn …" names no turn."""
_CLIENT = re.compile(r"^mcp client (?P<client>\S+)", re.MULTILINE)
"""The line `cairn mcp` writes in a commit's body (`shell.mcp_server.origin`)."""
_REASON = re.compile(r"^memory\((?P<reason>[a-z]+)\):")


@dataclass(frozen=True)
class HistoryCommit:
    """One commit of the workspace, as the history view shows it."""

    sha: str
    short: str
    when: datetime
    subject: str
    kind: str
    """Why it was made: tool, flush, dream, user edit, mcp (another agent's call through `cairn
    mcp`), outside edit, seed, revert, sync (a merge or a settled conflict) or other."""
    session: str | None
    turn: int | None
    files: list[str] = field(default_factory=list)
    body: str = ""
    client: str | None = None
    """The MCP client whose call made it (`cairn mcp`), as it named itself; None for Cairn's."""
    machine: str = ""
    """Where it was made: the host part of the author's email."""

    @property
    def message(self) -> str:
        return self.subject if not self.body else f"{self.subject}\n\n{self.body}"

    def as_json(self) -> dict[str, object]:
        return {
            "sha": self.sha,
            "when": self.when.isoformat(),
            "kind": self.kind,
            "subject": self.subject,
            "session": self.session,
            "turn": self.turn,
            "client": self.client,
            "machine": self.machine,
            "files": self.files,
        }


def commit_kind(subject: str) -> str:
    """The kind of a commit, from its subject line."""
    if match := _REASON.match(subject):
        reason = match["reason"]
        return "user edit" if reason == "user" else reason
    if subject.startswith("edit made outside Cairn"):
        return "outside edit"
    if subject.startswith("edit by the user"):  # files.USER_EDIT: the TUI's $EDITOR key
        return "user edit"
    if subject.startswith("workspace:"):
        return "seed"
    if subject.startswith("Revert "):
        return "revert"
    if subject.startswith("sync: "):  # a merge of the remote's lines, or a conflict settled
        return "sync"
    return "other"


def history_commit(info: CommitInfo) -> HistoryCommit:
    subject, _, body = info.message.partition("\n")
    client = _CLIENT.search(body)
    origins = [] if client else list(_ORIGIN.finditer(body))
    origin = origins[-1] if origins else None
    return HistoryCommit(
        sha=info.sha.strip(),
        short=info.short,
        when=datetime.fromisoformat(info.when),
        subject=subject.strip(),
        kind=commit_kind(subject),
        session=origin["session"] if origin else None,
        turn=int(origin["turn"]) if origin else None,
        files=info.files,
        body=body.strip(),
        client=client["client"] if client else None,
        machine=info.machine,
    )

"""No secret leaves the machine: what a push would send is scanned, byte by byte, first.

Every commit that would leave is read (`shell.git.objects`), not only the end result, since a
credential added and later removed is still in the history a push sends: the bytes of every
blob each commit adds or changes (binary or not, whatever `.gitattributes` says), the name of
every such file, and each commit's whole text (message, author and committer). A blob over
`MAX_SCANNED_BYTES` is not read, and stops the push as a finding of its own: nothing leaves
unread. The detectors are the memory writes' own (`shell.secrets.detect`). A finding names its
commit, file and line, and shows the line with the secret masked, never the value.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from shell.git.objects import (
    RawCommit,
    changed_entries,
    object_sizes,
    outgoing,
    read_commits,
    read_objects,
)
from shell.git.runner import Git
from shell.secrets.blobs import (
    MAX_SCANNED_BYTES,
    TOO_BIG,
    Found,
    decoded,
    redacted_name,
    secrets_in,
    secrets_in_text,
    shown,
)

BATCH_BYTES = 32 * 1024 * 1024
Where = Literal["content", "name", "message", "identity"]


@dataclass(frozen=True)
class SecretFinding:
    """A credential in an outgoing commit: where it is and what kind, never its value."""

    file: str
    """The file's name, masked if the secret is in it ("" for a commit's message)."""
    line: int
    kind: str
    commit: str
    where: Where = "content"
    masked: str = ""
    """The line with the secret masked ("" for a name). `where="identity"`: a header of the
    commit (author, committer, signature)."""

    def describe(self) -> str:
        at = f"commit {self.commit[:10]}"
        if self.where == "message":
            return f"the message of {at}, line {self.line} ({self.kind})"
        if self.where == "identity":
            return f"the headers of {at}, line {self.line} ({self.kind})"
        if self.where == "name":
            return f"the name {self.file} ({self.kind}, {at})"
        if self.kind == TOO_BIG:
            return f"{self.file} ({self.masked}, {at})"
        return f"{self.file}:{self.line} ({self.kind}, {at})"


@dataclass
class OutgoingScan:
    """The commits a push would send, parents first, and what the scan found in them."""

    commits: list[RawCommit] = field(default_factory=list)
    findings: list[SecretFinding] = field(default_factory=list)
    blobs: dict[str, bytes] = field(default_factory=dict)
    """The bytes of each blob that holds a secret."""
    names: set[bytes] = field(default_factory=set)
    """The paths whose name holds a secret."""


def scan_outgoing(git: Git, head: str, remote_head: str | None) -> tuple[int, list[SecretFinding]]:
    """How many commits `remote_head..head` holds (all of `head`'s history when the remote has
    none yet), and the credentials in them, in history order."""
    scan = scan_commits(git, head, remote_head)
    return len(scan.commits), scan.findings


def scan_commits(git: Git, head: str, remote_head: str | None) -> OutgoingScan:
    """`scan_outgoing`, with the commits and what a redaction needs to rewrite them."""
    scan = OutgoingScan(commits=read_commits(git, outgoing(git, head, remote_head)))
    changes = changed_entries(git, scan.commits)
    shas = {e.sha for entries in changes.values() for e in entries if e.is_blob}
    sizes = object_sizes(git, shas)
    readable = {sha for sha in shas if sizes.get(sha, 0) <= MAX_SCANNED_BYTES}
    found_in: dict[str, list[Found]] = {}
    for batch in _batches(sorted(readable), sizes):
        for sha, blob in read_objects(git, batch).items():
            if found := secrets_in(blob):
                found_in[sha] = found
                scan.blobs[sha] = blob
    for commit in scan.commits:
        said, _, message = commit.text(signed=True).partition(b"\n\n")
        parts: tuple[tuple[Where, bytes], ...] = (("identity", said), ("message", message))
        for where, text in parts:
            for line in secrets_in(text):
                scan.findings.append(
                    SecretFinding("", line.line, line.kind, commit.sha, where, line.masked)
                )
        for entry in changes[commit.sha]:
            name = shown(decoded(redacted_name(entry.path)))
            if in_name := secrets_in_text(decoded(entry.path)):
                scan.names.add(entry.path)
                for kind in sorted({f.kind for f in in_name}):
                    scan.findings.append(SecretFinding(name, 1, kind, commit.sha, "name"))
            if entry.is_blob and entry.sha not in readable:
                size = f"{sizes.get(entry.sha, 0):,} bytes, over the {MAX_SCANNED_BYTES:,} read"
                scan.findings.append(SecretFinding(name, 0, TOO_BIG, commit.sha, masked=size))
            for line in found_in.get(entry.sha, []):
                scan.findings.append(
                    SecretFinding(name, line.line, line.kind, commit.sha, masked=line.masked)
                )
    return scan


def _batches(shas: list[str], sizes: dict[str, int]) -> Iterator[list[str]]:
    """`shas` in runs of at most `BATCH_BYTES` (or one blob), so a first push of a whole
    history never holds all of it in memory at once."""
    batch: list[str] = []
    held = 0
    for sha in shas:
        if batch and held + sizes.get(sha, 0) > BATCH_BYTES:
            yield batch
            batch, held = [], 0
        batch.append(sha)
        held += sizes.get(sha, 0)
    if batch:
        yield batch


def describe_findings(findings: list[SecretFinding]) -> str:
    """The one-line message of a push stopped by `findings`."""
    shown_ = ", ".join(finding.describe() for finding in findings[:5])
    more = f" and {len(findings) - 5} more" if len(findings) > 5 else ""
    return (
        f"push stopped: a secret would leave this machine at {shown_}{more}; it is in commits "
        "not pushed yet: `/sync redact` (or `cairn sync --redact-unpushed`) shows how they "
        "would be rewritten with it redacted"
    )

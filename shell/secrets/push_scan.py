"""No secret leaves the machine: the lines outgoing commits add are scanned before a push.

The detectors are the memory writes' own (`shell.secrets.detect`). Every commit that would
leave is scanned, not only the end result, since a credential added and later removed is still
in the history a push sends. A finding names its file, line and commit, never the value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from shell.git.runner import Git
from shell.secrets.detect import secret_kinds

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(?P<start>\d+)(?:,\d+)? @@")
_COMMIT = "\x00commit "


@dataclass(frozen=True)
class SecretFinding:
    """A credential in an outgoing commit: where it is and what kind, never its value."""

    file: str
    line: int
    kind: str
    commit: str

    def describe(self) -> str:
        return f"{self.file}:{self.line} ({self.kind}, commit {self.commit[:10]})"


def scan_outgoing(git: Git, head: str, remote_head: str | None) -> tuple[int, list[SecretFinding]]:
    """How many commits `remote_head..head` holds (all of `head`'s history when the remote has
    none yet), and the credentials in the lines they add, in history order. A merge adds
    nothing of its own: its lines are its parents'."""
    revisions = [f"{remote_head}..{head}"] if remote_head else [head]
    output = git.run(
        [
            "log",
            "--reverse",
            "-p",
            "-U0",
            "--no-color",
            "--no-ext-diff",
            "--no-renames",
            "--format=%x00commit %H",
            *revisions,
            "--",
        ]
    ).stdout
    return output.count(_COMMIT), _scan_patch(output)


def _scan_patch(output: str) -> list[SecretFinding]:
    findings: list[SecretFinding] = []
    commit, file, number, header = "", "", 0, False
    for line in output.split("\n"):
        if line.startswith(_COMMIT):
            commit, file, number, header = line[len(_COMMIT) :].strip(), "", 0, False
        elif line.startswith("diff --git "):
            file, header = "", True
        elif header and line.startswith("+++ "):
            file = line[4:].removeprefix("b/") if line[4:] != "/dev/null" else ""
        elif line.startswith("@@") and (hunk := _HUNK.match(line)):
            number, header = int(hunk["start"]), False
        elif line.startswith("+") and file and not header:
            added = line[1:]
            kinds = secret_kinds(added)
            findings.extend(SecretFinding(file, number, kind, commit) for kind in sorted(kinds))
            number += 1
    return findings


def describe_findings(findings: list[SecretFinding]) -> str:
    """The one-line message of a push stopped by `findings`."""
    shown = ", ".join(finding.describe() for finding in findings[:5])
    more = f" and {len(findings) - 5} more" if len(findings) > 5 else ""
    return (
        f"push stopped: a secret would leave this machine at {shown}{more}; remove it from "
        "the commits not pushed yet (they are still local) and sync again"
    )

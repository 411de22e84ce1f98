"""The secrets policy applied to what a memory write carries, before anything is written.

Memory files are committed to git, so a credential in a write is redacted ("redact"), refused
("block") or let through ("off"), as `MemoryFiles` (`shell.memory.files.door`) is configured. The
scanner and the policy names are `shell.secrets.detect`; this module applies them to one write's
text, or to the lines a whole-file edit adds (the lines already there are the user's).
"""

from __future__ import annotations

from shell.events import SecretsRedacted
from shell.secrets import detect as secret_scan
from shell.text import split_lines


class SecretBlocked(ValueError):
    """The policy is "block" and a write holds a credential: the reason, for the writer to say."""


def without_secrets(policy: str, name: str, text: str) -> tuple[str, SecretsRedacted | None]:
    """`text` with its credentials redacted (or refused, by policy), before any write.

    Args:
        policy: One of `secret_scan.POLICIES`.
        name: The memory path written (named in the redaction event).
        text: What the write carries.

    Raises:
        SecretBlocked: the policy is "block" and the text holds a credential.
    """
    if policy == secret_scan.OFF:
        return text, None
    redacted, kinds = secret_scan.redact(text)
    if not kinds:
        return text, None
    if policy == secret_scan.BLOCK:
        raise SecretBlocked(
            f"not stored: the text holds what looks like a credential ({', '.join(kinds)}); "
            "memory files are committed to git, so leave the secret out"
        )
    return redacted, SecretsRedacted(path=name, kinds=kinds)


def without_new_secrets(
    policy: str, name: str, before: str, after: str
) -> tuple[str, SecretsRedacted | None]:
    """`after` with credentials redacted on the lines it adds to `before` (lines already
    there are the user's and stay as they are)."""
    old = set(split_lines(before))
    added = [line for line in split_lines(after) if line not in old]
    if not added:
        return after, None
    _, redaction = without_secrets(policy, name, "\n".join(added))
    if redaction is None:
        return after, None
    lines = [
        line if line in old else without_secrets(policy, name, line)[0]
        for line in split_lines(after)
    ]
    return "\n".join(lines) + ("\n" if after.endswith("\n") else ""), redaction

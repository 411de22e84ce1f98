"""What may cross from one scope to another: never a line holding a secret.

A scope's own memory holds what its writes let through (`secrets = "off"` keeps a credential
as written); what another scope reads of it (a hit, the global MEMORY.md in a project's
system prompt) has every line a detector flags taken out first, whatever the setting says.
"""

from __future__ import annotations

from shell.secrets.armour import without_private_keys
from shell.secrets.detect import redact


def without_secret_lines(text: str) -> str:
    """`text` without the lines that hold a secret (a private key goes whole)."""
    text, _ = without_private_keys(text)
    redacted, kinds = redact(text)
    if not kinds:
        return text
    kept = [
        line
        for line, checked in zip(text.split("\n"), redacted.split("\n"), strict=True)
        if line == checked and "[REDACTED Private Key]" not in line
    ]
    return "\n".join(kept)


WITHHELD = "[withheld: a line holding a secret stays in its own scope]"


def with_secret_lines_withheld(text: str) -> str:
    """`text` line for line, each line holding a secret (or a private key's) replaced by
    `WITHHELD`: a read of another scope keeps its line numbers."""
    out: list[str] = []
    in_key = False
    above = ""
    for line in text.split("\n"):
        if "PRIVATE KEY" in line and "-----BEGIN" in line:
            in_key = True
        if in_key or redact(f"{above}\n{line}")[0].split("\n")[-1] != line:
            out.append(WITHHELD)
        else:
            out.append(line)
        if in_key and "-----END" in line:
            in_key = False
        above = line
    return "\n".join(out)


def holds_secret(text: str) -> bool:
    """Whether any line of `text` holds a secret a detector flags."""
    return without_secret_lines(text) != text

"""Secrets in bytes, whatever they hold: a note, a file git calls binary, a name, a message.

Bytes are read as UTF-8 with every other byte kept as it is (`surrogateescape`), line by line,
so a NUL byte or a stray Latin-1 character hides nothing and a redaction changes only the
secret's own bytes. Bytes that hold a NUL are read a second time without their NULs: text in
UTF-16 (two bytes per letter) and a token spelt with NULs between its letters are found there.
What is compressed or encrypted stays unreadable; `not_text` says which memory files are not
plain text, for the notice of the commit that takes them in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from shell.secrets.detect import findings, findings_in_words, redact, secret_kinds

MAX_SCANNED_BYTES = 4 * 1024 * 1024
"""A blob over this is not read: the push stops (kind `TOO_BIG`) rather than send it unread."""
TOO_BIG = "Too Big To Scan"
SHOWN_CHARS = 120
_TOKEN = rb"(?:\x00*[A-Za-z0-9_\-.+/=~])*"
_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


@dataclass(frozen=True)
class Found:
    """A secret in some bytes: its 1-based line, its kind, and the line with it masked."""

    line: int
    kind: str
    masked: str


def decoded(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def secrets_in(data: bytes) -> list[Found]:
    """Every secret in `data`, by line; a line without NULs first, then the NUL-less view."""
    found = _in_text(decoded(data))
    if b"\0" in data:
        seen = {(f.line, f.kind) for f in found}
        found += [
            f for f in _in_text(decoded(data.replace(b"\0", b""))) if (f.line, f.kind) not in seen
        ]
    return found


def secrets_in_text(text: str) -> list[Found]:
    """Every secret in `text` (a file's name, a commit's message), by line."""
    return _in_text(text)


def redacted(data: bytes) -> bytes:
    """`data` with every secret `secrets_in` finds replaced by `[REDACTED <kind>]`, its other
    bytes unchanged (a secret found only without the NULs loses the NULs between its
    letters too)."""
    out = redact(decoded(data))[0].encode("utf-8", "surrogateescape")
    if b"\0" not in out:
        return out
    for line in decoded(out.replace(b"\0", b"")).split("\n"):
        found = [*findings(line), *findings_in_words(line)]
        for kind, value in sorted(found, key=lambda f: -len(f[1])):
            spelt = rb"\x00*".join(re.escape(bytes([c])) for c in value.encode("utf-8", "replace"))
            out = re.sub(spelt + _TOKEN, f"[REDACTED {kind}]".encode(), out)
    return out


def redacted_name(path: bytes) -> bytes:
    """A file's path with its secrets redacted, folder by folder; a name keeps its extension
    (a redaction grows a token over its dots, and `memory/<token>.md` must stay a note)."""
    parts = []
    for part in decoded(path).split("/"):
        stem, dot, suffix = part.rpartition(".")
        if not dot or not stem:
            stem, dot, suffix = part, "", ""
        parts.append(redact(stem)[0] + dot + suffix if secret_kinds(part) else part)
    return "/".join(parts).encode("utf-8", "surrogateescape")


def shown(text: str) -> str:
    """`text` fit to be shown: its secrets masked, control characters and bytes that are not
    UTF-8 as `?`, around the first mask when it is long."""
    masked = redact(text)[0].encode("utf-8", "replace").decode("utf-8")
    masked = _UNPRINTABLE.sub("?", masked.replace("\t", " "))
    if len(masked) <= SHOWN_CHARS:
        return masked
    at = max(0, masked.find("[REDACTED") - SHOWN_CHARS // 3)
    cut = masked[at : at + SHOWN_CHARS]
    return ("…" if at else "") + cut + ("…" if at + SHOWN_CHARS < len(masked) else "")


def not_text(name: str, data: bytes) -> str | None:
    """Why the memory file `name` holding `data` is not plain Markdown text, or None."""
    if not name.lower().endswith(".md"):
        return "it is not a Markdown (.md) file"
    if b"\0" in data:
        return "it holds NUL bytes (git treats it as binary)"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "it is not UTF-8 text"
    return None


def _in_text(text: str) -> list[Found]:
    found = []
    for number, line in enumerate(text.split("\n"), start=1):
        for kind in sorted(secret_kinds(line)):
            found.append(Found(number, kind, shown(line)))
    return found

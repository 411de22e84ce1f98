"""Private keys in their armour, removed whole: every `-----BEGIN … PRIVATE KEY-----` (PEM:
RSA, EC, DSA, PKCS#8 and its ENCRYPTED form, OpenSSH, SSH2) and `-----BEGIN PGP PRIVATE KEY
BLOCK-----`, from its BEGIN line to its END line, and a PuTTY key file from its first line to its
MAC.

The block may span lines, sit on one line (newlines pasted as spaces or as `\\n` in JSON), be
indented or quoted in markdown. A block without its END (pasted half) is removed as far as its
body goes: lines of base64, armour headers (`Version: …`, `Proc-Type: …`) and the blank line
PGP puts after them.
"""

from __future__ import annotations

import re

PRIVATE_KEY = "Private Key"

BEGIN = re.compile(
    r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File-\d+:"
)
_END = re.compile(r"-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|Private-MAC: *[0-9a-f]+")
_BODY_LINE = re.compile(
    r"[\s>*`-]*"
    r"(?:[A-Za-z0-9+/]{16,}={0,2}|[A-Za-z0-9+/]*=|[A-Za-z][A-Za-z0-9-]*: .*|=[A-Za-z0-9+/]{4})?\s*"
)
"""A line of a block's body, after any indent or markdown quote: base64, a header, or empty."""


def without_private_keys(text: str) -> tuple[str, bool]:
    """`text` with each armoured private key replaced by `[REDACTED Private Key]`, and whether
    there was one."""
    out, start, found = [], 0, False
    while begin := BEGIN.search(text, start):
        found = True
        end = _END.search(text, begin.end())
        following = BEGIN.search(text, begin.end())
        if end and following and following.start() < end.start():
            end = None  # this block has no END: the one found is the next block's
        stop = end.end() if end else _body_end(text, begin.end())
        out.append(text[start : begin.start()] + f"[REDACTED {PRIVATE_KEY}]")
        start = stop
    return "".join(out) + text[start:], found


def _body_end(text: str, at: int) -> int:
    """Where an unterminated block's body ends: at the end of its BEGIN line's rest and of the
    body lines after it, leaving a trailing blank line to the text."""
    line_end = text.find("\n", at)
    if line_end < 0:
        return len(text)
    end, position = line_end, line_end + 1
    while position <= len(text):
        following = text.find("\n", position)
        stop = len(text) if following < 0 else following
        line = text[position:stop]
        if not _BODY_LINE.fullmatch(line):
            break
        if line.strip():
            end = stop
        position = stop + 1
    return end

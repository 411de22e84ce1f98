"""Identifiers: the opaque tokens (ticket ids, error codes, hashes, paths, URLs, host:port,
times, dates, versions, e-mail addresses) a summary must keep verbatim.

`extract_identifiers` is what compaction's quality check counts; `identifiers` adds what a
summary by rule keeps on top, so such a summary never fails that check.
"""

from __future__ import annotations

import re

MAX_IDENTIFIERS = 12
_IDENTIFIER = re.compile(
    r"""
      https?://[^\s<>()\[\]"'`]+                               # URLs
    | [0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}  # UUIDs
    | \d{4}-\d{2}-\d{2}(?:[T\ ]\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?)?  # dates, times
    | (?<![\w/.~-])(?:~|\.{1,2})?/[\w.-]+(?:/[\w.-]+)*/?            # absolute paths
    | (?<![\w/.~-])[\w.-]+(?:/[\w.-]+)*/[\w-]+\.\w{1,5}\b             # relative file paths
    | \b[\w-]+\.(?:md|py|ts|js|json|toml|ya?ml|txt|log|sh|rs|go|cfg|ini|csv|sql|html)\b  # files
    | \b(?:\d{1,3}\.){3}\d{1,3}(?::\d{2,5})?\b                        # IPs, IP:port
    | \b[a-zA-Z][\w-]*(?:\.[\w-]+)*:\d{2,5}\b                         # host:port
    | \b\d{1,2}:\d{2}(?::\d{2})?\b                                    # clock times
    | \b[A-Z][A-Z0-9]+-\d+\b                                          # tickets: OPS-4471
    | \b0x[0-9a-fA-F]+\b                                              # hex codes
    | \b[A-Z]{1,6}\d{2,}\b                                            # error codes: E1234
    | \bE[A-Z]{4,}\b                                                  # errno names
    | \b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}\b             # hashes
    """,
    re.VERBOSE,
)
_TRAILING_PUNCTUATION = ".,;:!?"


def extract_identifiers(text: str, limit: int = MAX_IDENTIFIERS) -> list[str]:
    """Opaque identifiers in `text` (ticket ids, error codes, hashes, paths, URLs, host:port,
    times, dates), deduplicated, the most recent `limit` of them in order of appearance."""
    found: list[str] = []
    for match in _IDENTIFIER.finditer(text):
        value = match.group(0).rstrip(_TRAILING_PUNCTUATION)
        if len(value) < 3:
            continue
        if value in found:
            found.remove(value)
        found.append(value)
    return found[-limit:]


_MORE_IDENTIFIERS = re.compile(
    r"""
      \bv?\d+(?:\.\d+){2,}(?:[-+][\w.]+)?\b | \bv\d+\.\d+\b      # versions: 1.106.2, v2.4
    | [\w.+-]+@[\w-]+(?:\.[\w-]+)+                             # e-mail addresses
    | (?<![\w/.~:-])[\w.-]+(?:/[\w.-]+){2,}/?                   # relative paths: src/shell/x
    | \b(?=[0-9a-f]*\d)[0-9a-f]{7,64}\b                           # hashes and long numbers
    | \b(?:[01]?\d|2[0-3]):[0-5]\d\s?[ap]m\b                      # times: 2:30pm
    """,
    re.VERBOSE | re.IGNORECASE,
)


def identifiers(text: str) -> list[str]:
    """Opaque tokens a summary must keep verbatim, in order of first appearance.

    Everything compaction's quality check counts as an identifier (ticket ids, error codes,
    hashes, paths, URLs, host:port, times, dates), so a demo summary never fails that check,
    plus versions, e-mail addresses, deeper relative paths and long numbers."""
    more = [m.group(0).rstrip(".,;:!?") for m in _MORE_IDENTIFIERS.finditer(text)]
    found = dict.fromkeys([*extract_identifiers(text, limit=10**6), *more])
    # A date inside "2026-03-03 16:05" or a hash inside a path is kept by keeping the whole.
    kept = [i for i in found if not any(i != other and i in other for other in found)]
    return sorted(kept, key=text.find)

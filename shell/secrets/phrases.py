"""Secrets that are not one random token, each only right after the words that name it: a PIN
or a door code ("PIN for the garage door: 4821"), backup codes, a wallet's recovery phrase (12
to 24 words), and a passphrase in quotes ("the passphrase is 'purple monkey dishwasher 42'").
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from shell.secrets.context import PASSWORD_WORDS

_JOIN = r"\s*(?:(?:is|was|are|est|ist|lautet|es|é|è|c['’]est|it['’]s)\s*:?|:|=)\s*"
_CODE = r"[0-9][0-9#*-]{3,11}"
_PIN = re.compile(
    r"(?<![^\W\d_])(?:pins?(?:[ -]?codes?)?|(?:door|gate|alarm|garage|safe|backup|recovery)"
    r"[ -]?codes?|codes? (?:pin|de (?:la )?porte|d['’]accès)|codice pin|türcode|código pin)"
    rf"(?![^\W\d_])[^.:=\n]{{0,40}}?{_JOIN}(?P<v>{_CODE}(?:(?:[,;]\s*|\s+and\s+){_CODE})*)",
    re.IGNORECASE,
)
_RECOVERY = re.compile(
    r"(?<![^\W\d_])(?:(?:recovery|seed|secret|backup|mnemonic|wallet) (?:phrase|words)|mnemonic"
    r"|phrase de récupération|wiederherstellungsphrase|frase de recuperación|frase semente"
    rf"|frase di recupero)(?![^\W\d_])[^.:=\n]{{0,40}}?{_JOIN}"
    r"(?P<v>(?:[a-z]{3,8}[ ,]+){11,23}[a-z]{3,8})",
    re.IGNORECASE,
)
_QUOTED = re.compile(
    rf"(?<![^\W\d_])(?:{PASSWORD_WORDS})(?![^\W\d_])[^.!?\n\"'“‘«]{{0,60}}?{_JOIN}"
    r"[\"'“‘«](?P<v>[^\"'”’»\n]{6,80})[\"'”’»]",
    re.IGNORECASE,
)
_PHRASE_LENGTHS = frozenset({12, 15, 18, 21, 24})


def secret_phrases(line: str) -> Iterator[str]:
    """Each PIN, list of codes, recovery phrase or quoted passphrase in `line`, as written."""
    for found in _PIN.finditer(line):
        if sum(c.isdigit() for c in found["v"].split(",")[0]) >= 4:
            yield found["v"]
    for found in _RECOVERY.finditer(line):
        if len(re.findall(r"[a-z]+", found["v"], re.IGNORECASE)) in _PHRASE_LENGTHS:
            yield found["v"]
    for found in _QUOTED.finditer(line):
        words = found["v"].split()
        if "[REDACTED " in found["v"]:
            continue  # what a detector before replaced
        if len(words) > 1 and any(not c.isalpha() and not c.isspace() for c in found["v"]):
            yield found["v"]  # several words with a digit or a symbol: not a description

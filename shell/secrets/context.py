"""Secrets written in plain words: a random-looking token right after a word such as secret,
key, token or password ("the secret is wJalrXUtnFEMI/K7MDENG/…", "api token: 9f3c…").

detect-secrets' keyword detector wants code (`password = "…"`, `aws_secret_access_key=…`) and
its entropy detectors are off, as they would take every commit hash and UUID memory keeps. This
is the entropy check limited to that context (`secrets.py` wraps it as a detect-secrets plugin):

- A keyword (secret, key, token, password, passwd, passphrase, pwd, credential; plural too, and
  inside names such as `api_key`), then at most four words ("is", ":", "=", "for staging is"),
  then the token. A sentence end stops the look-ahead.
- The token is at least 16 characters of base64 or hex, holds a digit, and looks random: mixed
  case or base64 symbols with a Shannon entropy above 3.0 bits, or hex above 3.0 bits. After a
  password word joined only by "is", ":" or "=", 8 characters with a digit are enough.
- Kept on purpose: UUIDs, and any token named as an identifier on the way or just before the
  keyword (commit, sha, sha256, hash, digest, checksum, id, uuid, revision, ref: "the key commit
  is 4f9a…", "key id 3f2a…", "the sha256 of the key file is 9f86…"); URLs, paths and e-mail
  addresses.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

_KEYWORD = re.compile(
    r"(?<![A-Za-z])(secret|key|token|password|passwd|passphrase|pwd|credential)s?(?![A-Za-z])",
    re.IGNORECASE,
)
_PASSWORDS = frozenset({"password", "passwd", "passphrase", "pwd"})
_JOINERS = frozenset({"is", "was", ":", "=", "-", "->", "=>"})
_IDENTIFIER_WORDS = frozenset(
    {
        "commit", "commits", "sha", "sha1", "sha-1", "sha256", "sha-256", "hash", "hashes",
        "digest", "checksum", "id", "ids", "uuid", "revision", "rev", "ref", "fingerprint",
    }
)  # fmt: skip
_BASE64 = re.compile(r"[A-Za-z0-9+/=_\-.~]+")
_HEX = re.compile(r"[0-9a-fA-F]+")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_PASSWORD_CHARS = re.compile(r"[!-~]+")  # printable, no space
_QUOTES = "\"'`([{<"
_TRAILING = "\"'`)]}>,;:!?."
_LOOK_AHEAD, _LOOK_BEHIND = 5, 3
MIN_LENGTH, MIN_PASSWORD_LENGTH, MIN_ENTROPY, MIN_PASSWORD_ENTROPY = 16, 8, 3.0, 2.5

Entropy = Callable[[str], float]


def secrets_after_keywords(
    line: str, base64_entropy: Entropy, hex_entropy: Entropy
) -> Iterator[str]:
    """Each token of `line` that is a secret by the rule above (as written, once each)."""
    found: set[str] = set()
    for keyword in _KEYWORD.finditer(line):
        if _names_an_identifier(line[: keyword.start()].split()[-_LOOK_BEHIND:]):
            continue  # "the sha256 of the key file is 9f86…"
        password = keyword.group(1).lower() in _PASSWORDS
        words = line[keyword.end() :].split()[:_LOOK_AHEAD]
        for position, word in enumerate(words):
            joiner, token = _split_joiner(word)
            bare = token.rstrip(".") if token else word.strip(_QUOTES + _TRAILING).lower()
            if not token:
                if bare in _IDENTIFIER_WORDS:
                    break
                if word.endswith((".", "!", "?")) and bare not in _JOINERS:
                    break
                continue
            close = password and (position == 0 or _joined_only(words[:position]) or joiner)
            if _is_secret(token, base64_entropy, hex_entropy, password=bool(close)):
                found.add(token)
                break
            if token.lower() in _IDENTIFIER_WORDS or word.endswith((".", "!", "?")):
                break
    yield from sorted(found)


def _split_joiner(word: str) -> tuple[bool, str]:
    """(whether the word began with ':' or '=', the token left after quotes and punctuation),
    or (False, "") when nothing token-like is left."""
    stripped = word.lstrip(":=").lstrip(_QUOTES)
    joiner = stripped != word.lstrip(_QUOTES)
    token = stripped.rstrip(_TRAILING)
    if len(token) < MIN_PASSWORD_LENGTH or not _PASSWORD_CHARS.fullmatch(token):
        return joiner, ""
    return joiner, token


def _names_an_identifier(words: list[str]) -> bool:
    return any(word.strip(_QUOTES + _TRAILING).lower() in _IDENTIFIER_WORDS for word in words)


def _joined_only(words: list[str]) -> bool:
    return all(
        word.strip(_QUOTES + _TRAILING).lower() in _JOINERS or word in _JOINERS for word in words
    )


def _is_secret(
    token: str, base64_entropy: Entropy, hex_entropy: Entropy, *, password: bool
) -> bool:
    if _UUID.search(token) or "://" in token or ("@" in token.strip("@") and "." in token):
        return False
    if token.startswith(("/", "~", ".")) or token.lower() in _IDENTIFIER_WORDS:
        return False
    if not any(c.isdigit() for c in token) or not any(c.isalpha() for c in token):
        return False
    if password:
        return base64_entropy(token) > MIN_PASSWORD_ENTROPY
    if len(token) < MIN_LENGTH or not _BASE64.fullmatch(token):
        return False
    if _HEX.fullmatch(token):
        return hex_entropy(token) > MIN_ENTROPY
    mixed_case = any(c.islower() for c in token) and any(c.isupper() for c in token)
    symbols = any(c in "+/=" for c in token)
    return (mixed_case or symbols) and base64_entropy(token) > MIN_ENTROPY

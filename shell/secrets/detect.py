"""Credentials never reach a memory file or its commit.

Every memory write is scanned with detect-secrets (Yelp's scanner) before it touches the disk:
its detectors for the common formats (AWS, GitHub, GitLab, OpenAI, Slack, Stripe keys, JSON web
tokens, private keys, passwords in URLs and `password = "…"` assignments), plus two it lacks
(Anthropic keys, bearer tokens). Its high-entropy detectors are left out on purpose: memory
keeps exact identifiers (commit hashes, UUIDs, ticket ids) that look random and are not secret.
They run only on a token written right after a word such as secret, key, token or password
("the secret is wJalrXUtnFEMI/…"), as `shell.secrets.context` decides, and last, on what
the other detectors left.

A finding is redacted in place (`[REDACTED <kind>]`) by default, or the write is refused
(`secrets = "block"`); the caller reports what was found, never the value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator, Iterator
from functools import cache
from typing import Any, ClassVar

from shell.events import BaseEvent, to_dict

__all__ = [
    "BLOCK",
    "OFF",
    "POLICIES",
    "REDACT",
    "findings",
    "findings_in_words",
    "redact",
    "redact_values",
    "redacted_json",
    "secret_kinds",
]

REDACT, BLOCK, OFF = "redact", "block", "off"
POLICIES = (REDACT, BLOCK, OFF)

_TOKEN_CHARS = re.compile(r"[A-Za-z0-9_\-.+/=~]*")
_IN_WORDS = "Secret After A Keyword"
_EXACT = frozenset({"Basic Auth Credentials", "Secret Keyword", _IN_WORDS})
"""Kinds whose reported value is the whole secret, between a URL's ':' and '@' or in quotes."""
_PRIVATE_KEY = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.DOTALL
)


@cache
def _detectors() -> tuple[Any, ...]:
    # detect-secrets takes ~0.2 s to import: only when something is written.
    from detect_secrets.plugins.aws import AWSKeyDetector
    from detect_secrets.plugins.base import RegexBasedDetector
    from detect_secrets.plugins.basic_auth import BasicAuthDetector
    from detect_secrets.plugins.github_token import GitHubTokenDetector
    from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
    from detect_secrets.plugins.jwt import JwtTokenDetector
    from detect_secrets.plugins.keyword import KeywordDetector
    from detect_secrets.plugins.openai import OpenAIDetector
    from detect_secrets.plugins.private_key import PrivateKeyDetector
    from detect_secrets.plugins.slack import SlackDetector
    from detect_secrets.plugins.stripe import StripeDetector

    class AnthropicKeyDetector(RegexBasedDetector):
        """Anthropic API keys (`sk-ant-api03-…`), which detect-secrets 1.5 does not know."""

        secret_type = "Anthropic API Key"
        denylist: ClassVar = [re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{20,}")]

    class BearerTokenDetector(RegexBasedDetector):
        """An `Authorization: Bearer …` token that is not a JSON web token."""

        secret_type = "Bearer Token"
        denylist: ClassVar = [re.compile(r"\b[Bb]earer\s+([A-Za-z0-9_\-.+/~]{16,}=*)")]

    return (
        AWSKeyDetector(),
        AnthropicKeyDetector(),
        BasicAuthDetector(),
        BearerTokenDetector(),
        GitHubTokenDetector(),
        GitLabTokenDetector(),
        JwtTokenDetector(),
        KeywordDetector(),
        OpenAIDetector(),
        PrivateKeyDetector(),
        SlackDetector(),
        StripeDetector(),
    )


@cache
def _in_words() -> Any:
    from detect_secrets.plugins.base import BasePlugin
    from detect_secrets.plugins.high_entropy_strings import (
        Base64HighEntropyString,
        HexHighEntropyString,
    )

    from shell.secrets.context import secrets_after_keywords

    class SecretAfterKeywordDetector(BasePlugin):
        """detect-secrets' entropy measures, on a token right after a secret's name."""

        secret_type = _IN_WORDS

        def analyze_string(self, string: str) -> Generator[str, None, None]:
            base64, hex_ = Base64HighEntropyString(), HexHighEntropyString()
            yield from secrets_after_keywords(
                string, base64.calculate_shannon_entropy, hex_.calculate_shannon_entropy
            )

    return SecretAfterKeywordDetector()


def findings(line: str) -> Iterator[tuple[str, str]]:
    """The kind and value of each credential of a known format in `line` (AWS, GitHub, …)."""
    return _found(line, _detectors())


def findings_in_words(line: str) -> Iterator[tuple[str, str]]:
    """The kind and value of each high-entropy token right after a secret's name in `line`
    ("the secret is wJalrX…"); run on what `findings` left."""
    return _found(line, (_in_words(),))


def secret_kinds(line: str) -> set[str]:
    """The kinds of credential in `line`, of either sort: what a scan that only reports needs."""
    return {kind for kind, _ in findings(line)} | {kind for kind, _ in findings_in_words(line)}


def _found(line: str, detectors: tuple[Any, ...]) -> Iterator[tuple[str, str]]:
    for detector in detectors:
        for found in detector.analyze_line(filename="memory.md", line=line, line_number=0):
            if found.secret_value:
                yield found.type, found.secret_value


def redact(text: str) -> tuple[str, list[str]]:
    """`text` with each credential replaced by `[REDACTED <kind>]`, and the kinds found (sorted,
    once each). A private key is redacted from its BEGIN line to its END line."""
    kinds: set[str] = set()
    lines = []
    for line in text.split("\n"):
        for kind, value in sorted(findings(line), key=lambda f: -len(f[1])):
            kinds.add(kind)
            if kind != "Private Key":
                line = _redact_value(line, value, kind)
        for kind, value in sorted(findings_in_words(line), key=lambda f: -len(f[1])):
            kinds.add(kind)
            line = _redact_value(line, value, kind)
        lines.append(line)
    redacted = "\n".join(lines)
    if "Private Key" in kinds:
        redacted = _PRIVATE_KEY.sub("[REDACTED Private Key]", redacted)
    return redacted, sorted(kinds)


def _redact_value(line: str, value: str, kind: str) -> str:
    """Replace every occurrence of `value`, grown to the whole token it begins (a detector may
    report only a key's prefix, or a web token without its signature)."""
    out, start = [], 0
    while (at := line.find(value, start)) >= 0:
        end = at + len(value)
        grown = _TOKEN_CHARS.match(line, end)
        end = grown.end() if grown and kind not in _EXACT else end
        out.append(line[start:at] + f"[REDACTED {kind}]")
        start = end
    return "".join(out) + line[start:]


def redact_values(value: Any) -> Any:
    """`value` (JSON-like) with every string in it redacted, for what Cairn shows and records
    about a call or a message (events, traces, the session file). A string holding a JSON
    object (a tool call's arguments) is redacted value by value, so it stays valid JSON."""
    if isinstance(value, dict):
        return {key: redact_values(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [redact_values(item) for item in value]
    if not isinstance(value, str) or len(value) < 8:
        return value
    if value.startswith("{"):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict):
            cleaned = redact_values(parsed)
            return value if cleaned == parsed else json.dumps(cleaned, ensure_ascii=False)
    return redact(value)[0]


def redacted_json(event: BaseEvent) -> str:
    """`event` as `shell.events.to_json` writes it, with its secrets redacted: the form every
    event file on disk (the session's view log, a trace) holds."""
    return json.dumps(redact_values(to_dict(event)), ensure_ascii=False, default=str)

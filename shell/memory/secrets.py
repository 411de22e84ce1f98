"""Credentials never reach a memory file or its commit.

Every memory write is scanned with detect-secrets (Yelp's scanner) before it touches the disk:
its detectors for the common formats (AWS, GitHub, GitLab, OpenAI, Slack, Stripe keys, JSON web
tokens, private keys, passwords in URLs and `password = "…"` assignments), plus two it lacks
(Anthropic keys, bearer tokens). Its high-entropy detectors are left out on purpose: memory
keeps exact identifiers (commit hashes, UUIDs, ticket ids) that look random and are not secret.

A finding is redacted in place (`[REDACTED <kind>]`) by default, or the write is refused
(`secrets = "block"`); the caller reports what was found, never the value.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any, ClassVar

REDACT, BLOCK, OFF = "redact", "block", "off"
POLICIES = (REDACT, BLOCK, OFF)

_TOKEN_CHARS = re.compile(r"[A-Za-z0-9_\-.+/=~]*")
_EXACT = frozenset({"Basic Auth Credentials", "Secret Keyword"})
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


def _findings(line: str) -> Iterator[tuple[str, str]]:
    for detector in _detectors():
        for found in detector.analyze_line(filename="memory.md", line=line, line_number=0):
            if found.secret_value:
                yield found.type, found.secret_value


def redact(text: str) -> tuple[str, list[str]]:
    """`text` with each credential replaced by `[REDACTED <kind>]`, and the kinds found (sorted,
    once each). A private key is redacted from its BEGIN line to its END line."""
    kinds: set[str] = set()
    lines = []
    for line in text.split("\n"):
        for kind, value in sorted(_findings(line), key=lambda f: -len(f[1])):
            kinds.add(kind)
            if kind != "Private Key":
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
        end = (
            grown.end()
            if grown and kind not in ("Basic Auth Credentials", "Secret Keyword")
            else end
        )
        out.append(line[start:at] + f"[REDACTED {kind}]")
        start = end
    return "".join(out) + line[start:]

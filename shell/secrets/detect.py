"""Credentials never reach a memory file or its commit.

Every memory write is scanned before it touches the disk, by three detectors:

1. **Known formats**, told by the value alone: every detect-secrets 1.5 plugin (Yelp's scanner:
   AWS, Artifactory, Azure storage, basic auth in URLs, Cloudant, Discord, GitHub, GitLab, IBM
   Cloud and COS, JSON web tokens, `password = "…"` assignments, Mailchimp, npm, OpenAI, PyPI,
   SendGrid, Slack, SoftLayer, Square, Stripe, Telegram, Twilio) except three: its two
   high-entropy detectors, which would take every commit hash and UUID memory keeps (they run
   in context instead, below), and its public IP detector (an address is not a secret). Beside
   them, the formats of `shell.secrets.rules`: the gitleaks and trufflehog formats
   detect-secrets lacks or knows too narrowly (Anthropic, Google `AIza…` and OAuth, Hugging
   Face, GitHub fine-grained `github_pat_…`, OpenAI project keys without their marker, Azure
   `AccountKey=` and AD secrets, `Authorization: Basic` and `Bearer`, DigitalOcean, Doppler,
   Databricks, Grafana, Groq, HashiCorp, Heroku, Linear, New Relic, Notion, PlanetScale,
   Postman, Sentry, Shopify, Stripe test and restricted keys, Tailscale, xAI and ~50 more).
2. **Private keys** in their armour, removed whole from BEGIN to END over as many lines as they
   take (`shell.secrets.armour`: PEM, OpenSSH, PGP blocks, PuTTY files).
3. **Secrets in words**: a random token, or a password, near a word such as secret, key,
   token or password in six languages (`shell.secrets.context`), and PINs, codes, recovery
   phrases and quoted passphrases after the words that name them (`shell.secrets.phrases`),
   on what the others left.

A finding is redacted in place (`[REDACTED <kind>]`) by default, or the write is refused
(`secrets = "block"`); the caller reports what was found, never the value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from typing import Any

from shell.events import BaseEvent, to_dict
from shell.secrets.armour import BEGIN, PRIVATE_KEY, without_private_keys
from shell.secrets.context import secrets_after_keywords
from shell.secrets.phrases import secret_phrases
from shell.secrets.rules import RULES

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
_INVISIBLE = re.compile("[\u00ad\u200b-\u200f\u2060-\u2064\ufeff]")
"""Characters that show nothing: a secret may carry them and still be pasted whole."""
_IN_WORDS = "Secret After A Keyword"
_EXACT = frozenset({"Basic Auth Credentials", "Secret Keyword", _IN_WORDS})
"""Kinds whose reported value is the whole secret, between a URL's ':' and '@' or in quotes."""


@cache
def _detectors() -> tuple[Any, ...]:
    # detect-secrets takes ~0.2 s to import: only when something is written.
    from detect_secrets.plugins.artifactory import ArtifactoryDetector
    from detect_secrets.plugins.aws import AWSKeyDetector
    from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
    from detect_secrets.plugins.basic_auth import BasicAuthDetector
    from detect_secrets.plugins.cloudant import CloudantDetector
    from detect_secrets.plugins.discord import DiscordBotTokenDetector
    from detect_secrets.plugins.github_token import GitHubTokenDetector
    from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
    from detect_secrets.plugins.ibm_cloud_iam import IbmCloudIamDetector
    from detect_secrets.plugins.ibm_cos_hmac import IbmCosHmacDetector
    from detect_secrets.plugins.jwt import JwtTokenDetector
    from detect_secrets.plugins.keyword import KeywordDetector
    from detect_secrets.plugins.mailchimp import MailchimpDetector
    from detect_secrets.plugins.npm import NpmDetector
    from detect_secrets.plugins.openai import OpenAIDetector
    from detect_secrets.plugins.pypi_token import PypiTokenDetector
    from detect_secrets.plugins.sendgrid import SendGridDetector
    from detect_secrets.plugins.slack import SlackDetector
    from detect_secrets.plugins.softlayer import SoftlayerDetector
    from detect_secrets.plugins.square_oauth import SquareOAuthDetector
    from detect_secrets.plugins.stripe import StripeDetector
    from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
    from detect_secrets.plugins.twilio import TwilioKeyDetector

    return (
        ArtifactoryDetector(),
        AWSKeyDetector(),
        AzureStorageKeyDetector(),
        BasicAuthDetector(),
        CloudantDetector(),
        DiscordBotTokenDetector(),
        GitHubTokenDetector(),
        GitLabTokenDetector(),
        IbmCloudIamDetector(),
        IbmCosHmacDetector(),
        JwtTokenDetector(),
        KeywordDetector(),
        MailchimpDetector(),
        NpmDetector(),
        OpenAIDetector(),
        PypiTokenDetector(),
        SendGridDetector(),
        SlackDetector(),
        SoftlayerDetector(),
        SquareOAuthDetector(),
        StripeDetector(),
        TelegramBotTokenDetector(),
        TwilioKeyDetector(),
    )


def findings(line: str) -> Iterator[tuple[str, str]]:
    """The kind and value of each credential of a known format in `line` (AWS, GitHub, …),
    and a private key's BEGIN line (a scan of single lines sees no more of the block)."""
    yield from _found(line, _detectors())
    lowered = line.lower()
    for rule in RULES:
        for value in rule.values(line, lowered):
            yield rule.kind, value
    if "private" in lowered or "putty" in lowered:
        for begin in BEGIN.finditer(line):
            yield PRIVATE_KEY, begin.group()


def findings_in_words(line: str, above: str = "") -> Iterator[tuple[str, str]]:
    """The kind and value of each secret near a secret's name in `line` ("the secret is
    wJalrX…", "my bank password is correcthorse…"), or at the end of the line `above` ("the
    AWS secret is:" and the token alone on this line); run on what `findings` left."""
    for value in secrets_after_keywords(line, above):
        yield _IN_WORDS, value
    for value in secret_phrases(line):
        yield _IN_WORDS, value


def secret_kinds(line: str) -> set[str]:
    """The kinds of credential in `line`, of either sort: what a scan that only reports needs."""
    line = _INVISIBLE.sub("", line)
    return {kind for kind, _ in findings(line)} | {kind for kind, _ in findings_in_words(line)}


def _found(line: str, detectors: tuple[Any, ...]) -> Iterator[tuple[str, str]]:
    for detector in detectors:
        for found in detector.analyze_line(filename="memory.md", line=line, line_number=0):
            if found.secret_value:
                yield found.type, found.secret_value


def redact(text: str) -> tuple[str, list[str]]:
    """`text` with each credential replaced by `[REDACTED <kind>]`, and the kinds found (sorted,
    once each). A private key is redacted whole, from its BEGIN line to its END line."""
    text, private_key = without_private_keys(text)
    kinds: set[str] = {PRIVATE_KEY} if private_key else set()
    lines, above = [], ""
    for line in text.split("\n"):
        original = line
        if _INVISIBLE.search(line) and secret_kinds(line):
            line = _INVISIBLE.sub("", line)  # ghp_\u200b…: the invisible joiner hid the token
        for kind, value in sorted(findings(line), key=lambda f: -len(f[1])):
            kinds.add(kind)
            line = _redact_value(line, value, kind)
        for kind, value in sorted(findings_in_words(line, above), key=lambda f: -len(f[1])):
            kinds.add(kind)
            line = _redact_value(line, value, kind)
        lines.append(line)
        above = original
    return "\n".join(lines), sorted(kinds)


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

"""Credentials of a known format that detect-secrets 1.5 does not know, or knows too narrowly.

Each rule is a kind, one regular expression and the lower-case words one of which a line must
hold before the expression runs (a cheap filter, as gitleaks' `keywords`). The formats are the
providers' documented prefixes and lengths, as gitleaks' rules state them (config/gitleaks.toml,
MIT licence, Copyright (c) 2019 Zachary Rice; the expressions below are adapted to Python's re,
loosened where a provider's length varies) and as trufflehog's detectors describe them (facts
only: a prefix and a length). detect-secrets' own plugins run beside these (`detect.py`).

Only formats a value can be told by alone are here: a prefix (`ghp_`, `AIza`, `SG.`, `hf_`), a
fixed framing (`AccountKey=`, `Authorization: Basic`), or a checksum-like shape. The many
gitleaks rules that need a provider's name next to an unframed value (`datadog … = <40 hex>`)
are covered by the keyword context instead (`context.py`), which takes any random token near a
word such as key, token or secret.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_START = r"(?<![A-Za-z0-9])"
"""A rule's prefix begins a token (an underscore may precede it: markdown's `_…_`)."""
_B64_MIXED = r"(?=[A-Za-z0-9+/]*[0-9])(?=[A-Za-z0-9+/]*[A-Z])(?=[A-Za-z0-9+/]*[a-z])"
"""What follows holds a digit, an upper-case and a lower-case letter: encoded, not a word."""


@dataclass(frozen=True)
class Rule:
    """A kind of credential told by its format alone."""

    kind: str
    pattern: re.Pattern[str]
    keywords: tuple[str, ...]
    """Lower-case text one of which the line must hold for `pattern` to run."""

    def values(self, line: str, lowered: str) -> list[str]:
        """Each credential of this kind in `line` (`lowered` is the line in lower case): the
        group named `v` where the framing is not secret (`AccountKey=`), else the match."""
        if not any(keyword in lowered for keyword in self.keywords):
            return []
        named = "v" in self.pattern.groupindex
        return [found.group("v" if named else 0) for found in self.pattern.finditer(line)]


def _rule(kind: str, pattern: str, *keywords: str, start: bool = True) -> Rule:
    return Rule(kind, re.compile((_START if start else "") + pattern), keywords)


RULES: tuple[Rule, ...] = (
    _rule(
        "1Password Secret Key",
        r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
        "a3-",
    ),
    _rule("1Password Service Account Token", r"ops_eyJ[A-Za-z0-9+/]{100,}={0,3}", "ops_"),
    _rule("Adobe Client Secret", r"p8e-[A-Za-z0-9]{32}", "p8e-"),
    _rule(
        "Age Secret Key",
        r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        "age-secret-key-1",
    ),
    _rule("Airtable Token", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}", "pat"),
    _rule("Alibaba Access Key", r"LTAI[A-Za-z0-9]{20}", "ltai"),
    _rule("Anthropic API Key", r"sk-ant-(?:api|admin|sid)\d\d-[A-Za-z0-9_\-]{20,}", "sk-ant-"),
    _rule("Artifactory Token", r"(?:AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59})", "akcp", "cmvmd"),
    _rule(
        "AWS Bedrock API Key",
        r"(?:ABSK[A-Za-z0-9+/]{100,}={0,2}|bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%&-]*)",
        "absk",
        "bedrock-api-key-",
    ),
    _rule("Bearer Token", r"(?i:bearer)\s+(?P<v>[A-Za-z0-9_\-.+/~]{16,}=*)", "bearer"),
    _rule(
        "Authress Key",
        r"(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][A-Za-z0-9-]{10,32}"
        r"\.[A-Za-z0-9+/_=-]{30,120}",
        ".acc",
    ),
    _rule(
        "Basic Auth Credentials",
        r"[a-z][a-z0-9+.-]{1,20}://[^\s:/@]*:(?P<v>[^\s:/@]{3,})@[A-Za-z0-9.-]+",
        "://",
        start=False,
    ),
    _rule(
        "Basic Auth Credentials",
        r"(?:\s|^)(?:-u|--user)[ =][\"']?[^:\s\"']{1,64}:(?P<v>[^\s\"']{3,})",
        "curl",
        start=False,
    ),
    _rule("Azure AD Client Secret", r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}", "q~"),
    _rule(
        "Azure Storage Account access key",
        r"(?i:AccountKey|SharedAccessKey)=(?P<v>[A-Za-z0-9+/]{20,}={0,2})",
        "accountkey=",
        "sharedaccesskey=",
    ),
    _rule(
        "Azure SAS Token", r"[?&]sig=(?P<v>[A-Za-z0-9%+/]{30,}(?:%3D|=){0,2})", "sig=", start=False
    ),
    _rule(
        "Basic Auth Header",
        r"(?i:authorization)[\"']?\s*[:=]\s*[\"']?(?i:basic)\s+(?P<v>[A-Za-z0-9+/]{6,}={0,2})",
        "basic",
    ),
    _rule(
        "Basic Auth Header",
        r"(?i:basic)\s+(?P<v>" + _B64_MIXED + r"[A-Za-z0-9+/]{12,}={0,2})(?![A-Za-z0-9+/=])",
        "basic",
    ),
    _rule("ClickHouse API Key", r"4b1d[A-Za-z0-9]{38}(?![A-Za-z0-9])", "4b1d"),
    _rule("Clojars Token", r"(?i:CLOJARS_)[A-Za-z0-9]{60}", "clojars_"),
    _rule("Cloudflare Origin CA Key", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}", "v1.0-"),
    _rule("Databricks Token", r"dapi[a-f0-9]{32}(?:-\d)?(?![A-Za-z0-9])", "dapi"),
    _rule("DigitalOcean Token", r"do[opr]_v1_[a-f0-9]{64}", "_v1_"),
    _rule(
        "Discord Bot Token",
        r"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}",
        ".",
    ),
    _rule("Docker Hub Token", r"dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,}", "dckr_"),
    _rule(
        "Doppler Token",
        r"dp\.(?:pt|st(?:\.[a-z0-9\-_]{2,35})?|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}",
        "dp.",
    ),
    _rule("Duffel Token", r"duffel_(?:test|live)_[A-Za-z0-9_\-=]{43}", "duffel_"),
    _rule("Dynatrace Token", r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}", "dt0c01."),
    _rule("EasyPost Token", r"EZ[AT]K[A-Za-z0-9]{54}", "ezak", "eztk"),
    _rule("Facebook Access Token", r"EAA[MC][A-Za-z0-9]{100,}", "eaa"),
    _rule("Facebook Access Token", r"\d{15,16}(?:\||%7C)[0-9A-Za-z\-_]{27,40}", "|", "%7c"),
    _rule(
        "Flutterwave Key",
        r"FLW(?:SECK|PUBK)(?:_TEST)?-[A-Za-z0-9]{12,32}(?:-X)?",
        "flwseck",
        "flwpubk",
    ),
    _rule(
        "Fly.io Token",
        r"(?:fo1_[\w-]{43}|fm1[ar]_[A-Za-z0-9+/]{100,}={0,3}|fm2_[A-Za-z0-9+/]{100,}={0,3})",
        "fo1_",
        "fm1",
        "fm2_",
    ),
    _rule("Frame.io Token", r"fio-u-[A-Za-z0-9\-_=]{64}", "fio-u-"),
    _rule(
        "GitHub Token",
        r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{60,})",
        "gh",
        "github_pat_",
    ),
    _rule(
        "GitLab Token",
        r"gl(?:pat|rt|dt|ft|soat|ffct|cbt|imt|ptt|agent|oas)-[A-Za-z0-9_\-.]{20,}",
        "gl",
    ),
    _rule(
        "GitLab Session Cookie",
        r"_gitlab_session=(?P<v>[0-9a-z]{32})",
        "_gitlab_session=",
        start=False,
    ),
    _rule("Google API Key", r"AIza[\w-]{35}", "aiza"),
    _rule("Google OAuth Secret", r"GOCSPX-[A-Za-z0-9_-]{28}", "gocspx-"),
    _rule("Google OAuth Token", r"ya29\.[A-Za-z0-9_-]{30,}", "ya29."),
    _rule(
        "Grafana Token",
        r"(?:eyJrIjoi[A-Za-z0-9]{70,400}={0,3}|glc_[A-Za-z0-9+/]{32,400}={0,3}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})",
        "eyjrijoi",
        "glc_",
        "glsa_",
    ),
    _rule("Groq API Key", r"gsk_[A-Za-z0-9]{40,}", "gsk_"),
    _rule(
        "Harness Token",
        r"(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}",
        "pat.",
        "sat.",
    ),
    _rule(
        "HashiCorp Terraform Token", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9\-_=]{60,70}", "atlasv1"
    ),
    _rule("HashiCorp Vault Token", r"(?:hvs|hvb|hvr)\.[\w-]{90,300}", "hvs.", "hvb.", "hvr."),
    _rule("Heroku API Key", r"HRKU-AA[0-9A-Za-z_-]{58}", "hrku-"),
    _rule("Hugging Face Token", r"(?:hf_|api_org_)[A-Za-z]{34,}", "hf_", "api_org_"),
    _rule("Infracost Token", r"ico-[A-Za-z0-9]{32}", "ico-"),
    _rule("Intra42 Secret", r"s-s4t2(?:ud|af)-[a-f0-9]{64}", "s-s4t2"),
    _rule("LangSmith API Key", r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}", "lsv2_"),
    _rule("Linear API Key", r"lin_api_[A-Za-z0-9]{40}", "lin_api_"),
    _rule("Mailgun Key", r"(?:key|pubkey)-[a-f0-9]{32}(?![A-Za-z0-9])", "key-"),
    _rule("MaxMind License Key", r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk", "_mmk"),
    _rule(
        "Microsoft Teams Webhook",
        r"https://[a-z0-9]+\.webhook\.office\.com/webhookb2/[^\s\"'`]+",
        "webhookb2",
    ),
    _rule(
        "New Relic Key",
        r"NR(?:AK|II|JS|AA)-[A-Za-z0-9-]{19,32}",
        "nrak-",
        "nrii-",
        "nrjs-",
        "nraa-",
    ),
    _rule(
        "Notion Token",
        r"(?:ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43}(?![A-Za-z0-9]))",
        "ntn_",
        "secret_",
    ),
    _rule("npm Token", r"npm_[A-Za-z0-9]{36}", "npm_"),
    _rule("OpenAI Token", r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{40,}", "sk-"),
    _rule("OpenRouter API Key", r"sk-or-v1-[0-9a-f]{64}", "sk-or-"),
    _rule("Pinecone API Key", r"pcsk_[A-Za-z0-9]{5,6}_[A-Za-z0-9]{63}", "pcsk_"),
    _rule("PostHog Personal Key", r"phx_[A-Za-z0-9_]{43,48}", "phx_"),
    _rule("OpenAI-style API Key", r"sk-[A-Za-z0-9]{32,}(?![A-Za-z0-9_-])", "sk-"),
    _rule("Octopus Deploy API Key", r"API-[A-Z0-9]{26}(?![A-Za-z0-9])", "api-"),
    _rule("OpenShift Token", r"sha256~[\w-]{43}", "sha256~"),
    _rule("Perplexity API Key", r"pplx-[A-Za-z0-9]{48}", "pplx-"),
    _rule("PlanetScale Token", r"pscale_(?:tkn|oauth|pw)_[\w=.-]{32,64}", "pscale_"),
    _rule("Postman API Key", r"PMAK-[A-Fa-f0-9]{24}-[A-Fa-f0-9]{34}", "pmak-"),
    _rule("Prefect API Key", r"pnu_[A-Za-z0-9]{36}", "pnu_"),
    _rule("Pulumi Token", r"pul-[a-f0-9]{40}", "pul-"),
    _rule("PyPI Token", r"pypi-AgE[A-Za-z0-9_-]{50,}", "pypi-age"),
    _rule("ReadMe API Key", r"rdme_[a-z0-9]{70}", "rdme_"),
    _rule("Render API Key", r"rnd_[A-Za-z0-9]{32}", "rnd_"),
    _rule("Replicate Token", r"r8_[A-Za-z0-9_-]{37}", "r8_"),
    _rule("RubyGems Token", r"rubygems_[a-f0-9]{48}", "rubygems_"),
    _rule("Scalingo Token", r"tk-us-[\w-]{48}", "tk-us-"),
    _rule(
        "SendGrid API Key",
        r"SG\.(?:[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}|[A-Za-z0-9=_.-]{66})",
        "sg.",
    ),
    _rule("Sendinblue API Key", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}", "xkeysib-"),
    _rule("Sentry Token", r"(?:sntryu_[a-f0-9]{64}|sntrys_eyJ[A-Za-z0-9+/=_]{50,})", "sntry"),
    _rule("Settlemint Token", r"sm_(?:aat|pat|sat)_[A-Za-z0-9]{16}", "sm_"),
    _rule("Shippo Token", r"shippo_(?:live|test)_[a-fA-F0-9]{40}", "shippo_"),
    _rule("Shopify Token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", "shp"),
    _rule(
        "Slack Token",
        r"(?:xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+|xoxe(?:\.xox[bp])?-\d-[A-Za-z0-9]{140,})",
        "xapp-",
        "xoxe",
    ),
    _rule(
        "Slack Webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{20,}",
        "hooks.slack.com",
        start=False,
    ),
    _rule("Sourcegraph Token", r"sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}", "sgp_"),
    _rule("Square Token", r"(?:EAAA|sq0atp-|sq0csp-)[\w-]{22,60}", "eaaa", "sq0"),
    _rule(
        "Slack Token",
        r"xox[abprse]-(?:\d-)?[0-9A-Za-z][0-9A-Za-z-]{9,}",
        *("xoxa", "xoxb", "xoxp", "xoxr", "xoxs", "xoxe"),
    ),
    _rule(
        "Stripe Access Key",
        r"(?:sk|rk)_(?:test|live|prod)_[A-Za-z0-9]{10,99}",
        "k_test_",
        "k_live_",
        "k_prod_",
    ),
    _rule("Stripe Webhook Secret", r"whsec_[A-Za-z0-9]{32,}", "whsec_"),
    _rule("Supabase Token", r"sbp_[a-z0-9]{40}", "sbp_"),
    _rule(
        "Tailscale Key",
        r"tskey-[a-z]+-[A-Za-z0-9_]+-[A-Za-z0-9_]{16,}",
        "tskey-",
    ),
    _rule("Twilio API Key", r"SK[0-9a-fA-F]{32}(?![A-Za-z0-9])", "sk"),
    _rule("Typeform Token", r"tfp_[A-Za-z0-9\-_.=]{59}", "tfp_"),
    _rule("xAI API Key", r"xai-[A-Za-z0-9_]{70,}", "xai-"),
    _rule(
        "Yandex Key",
        r"(?:AQVN[A-Za-z0-9_\-]{35,38}|YC[A-Za-z0-9_\-]{38}|t1\.[A-Za-z0-9_-]+={0,2}\.[A-Za-z0-9_-]{86}={0,2})",
        "aqvn",
        "yc",
        "t1.",
    ),
)

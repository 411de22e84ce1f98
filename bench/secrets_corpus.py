"""The labelled corpus of `bench.secrets`: fake secrets in the shapes their providers document,
pasted as people paste them, and the ordinary lines that must stay as written.

Every value is made here from a fixed seed by its shape (a prefix, an alphabet, a length), as
gitleaks' own rule tests make their true positives (`secrets.NewSecret(regex)`); none is real.
The shapes come from the providers' documented formats as gitleaks' rules and trufflehog's
detectors state them (see `shell/secrets/rules.py`), written again here, not imported, so the
corpus does not test the detector's expressions against themselves.

A case is one pasted text and the secret in it. The styles: bare, after a keyword (`label: v`,
`LABEL=v`), in a sentence, in markdown (bold, code, a table, a quote), in another language (fr,
de, es, pt, it). Each style has templates used for tuning and templates held out (`held_out`),
looked at only at the end.
"""

from __future__ import annotations

import base64
import random
import string
from collections.abc import Callable
from dataclasses import dataclass

SEED = 31
ALNUM = string.ascii_letters + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
URL_SAFE = ALNUM + "-_"
BASE64 = ALNUM + "+/"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


@dataclass(frozen=True)
class Case:
    """A pasted text holding one secret (`value`; a private key's body lines for `body`)."""

    kind: str
    style: str
    text: str
    value: str
    held_out: bool
    body: tuple[str, ...] = ()


Make = Callable[[random.Random], str]


def _of(alphabet: str, n: int) -> Make:
    return lambda rng: "".join(rng.choice(alphabet) for _ in range(n))


def _cat(*parts: str | Make) -> Make:
    return lambda rng: "".join(p if isinstance(p, str) else p(rng) for p in parts)


def _jwt(rng: random.Random) -> str:
    def part(data: str) -> str:
        return base64.urlsafe_b64encode(data.encode()).decode().rstrip("=")

    header = part('{"alg":"HS256","typ":"JWT"}')
    payload = f'{{"sub":"{rng.randrange(10**9)}","name":"Ada","iat":{rng.randrange(10**9)}}}'
    return f"{header}.{part(payload)}.{_of(URL_SAFE, 43)(rng)}"


def _discord(rng: random.Random) -> str:
    user = base64.b64encode(str(rng.randrange(10**17, 10**18)).encode()).decode().rstrip("=")
    return f"{user}.{_of(URL_SAFE, 6)(rng)}.{_of(URL_SAFE, 38)(rng)}"


def _basic(rng: random.Random) -> str:
    user, password = _of(string.ascii_lowercase, 6)(rng), _of(ALNUM, 12)(rng)
    return base64.b64encode(f"{user}:{password}".encode()).decode()


def _passphrase(rng: random.Random) -> str:
    words = ["correct", "horse", "battery", "staple", "violet", "granite", "lantern", "oyster",
             "meadow", "pickle", "saffron", "glacier", "thimble", "walrus", "cobalt"]  # fmt: skip
    return "".join(rng.sample(words, 4))


def _password(rng: random.Random) -> str:
    word = rng.choice(["Soleil", "Tramonto", "Girasol", "Azul", "Sonnenblume", "Maple", "Otter"])
    return f"{word}{rng.randrange(10, 9999)}{rng.choice('!#$%&*')}"


# kind -> (shape, label in English, whether the value alone tells it: bare styles apply)
KINDS: dict[str, tuple[Make, str, bool]] = {
    "AWS access key id": (
        _cat("AKIA", _of("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)),
        "AWS access key id",
        True,
    ),
    "AWS secret access key": (_of(BASE64, 40), "AWS secret access key", False),
    "GitHub classic PAT": (_cat("ghp_", _of(ALNUM, 36)), "GitHub token", True),
    "GitHub OAuth token": (_cat("gho_", _of(ALNUM, 36)), "GitHub OAuth token", True),
    "GitHub fine-grained PAT": (
        _cat("github_pat_", _of(ALNUM, 22), "_", _of(ALNUM, 59)),
        "GitHub token",
        True,
    ),
    "GitLab PAT": (_cat("glpat-", _of(URL_SAFE, 20)), "GitLab token", True),
    "OpenAI project key": (
        _cat("sk-proj-", _of(URL_SAFE, 58), "T3BlbkFJ", _of(URL_SAFE, 58)),
        "OpenAI key",
        True,
    ),
    "OpenAI project key, short": (_cat("sk-proj-", _of(ALNUM, 48)), "OpenAI key", True),
    "OpenAI legacy key": (
        _cat("sk-", _of(ALNUM, 20), "T3BlbkFJ", _of(ALNUM, 20)),
        "OpenAI key",
        True,
    ),
    "Anthropic API key": (_cat("sk-ant-api03-", _of(URL_SAFE, 93), "AA"), "Anthropic key", True),
    "Slack bot token": (
        _cat("xoxb-", _of(string.digits, 12), "-", _of(string.digits, 13), "-", _of(ALNUM, 24)),
        "Slack bot token",
        True,
    ),
    "Slack webhook": (
        _cat(
            "https://hooks.slack.com/services/T",
            _of(UPPER_ALNUM, 8),
            "/B",
            _of(UPPER_ALNUM, 8),
            "/",
            _of(ALNUM, 24),
        ),
        "Slack webhook",
        True,
    ),
    "Stripe live secret key": (_cat("sk_live_", _of(ALNUM, 24)), "Stripe key", True),
    "Stripe test secret key": (_cat("sk_test_", _of(ALNUM, 99)), "Stripe test key", True),
    "Stripe restricted key": (_cat("rk_live_", _of(ALNUM, 24)), "Stripe restricted key", True),
    "Google API key": (_cat("AIza", _of(URL_SAFE, 35)), "Google Maps key", True),
    "Google OAuth client secret": (
        _cat("GOCSPX-", _of(URL_SAFE, 28)),
        "Google client secret",
        True,
    ),
    "SendGrid API key": (
        _cat("SG.", _of(URL_SAFE, 22), ".", _of(URL_SAFE, 43)),
        "SendGrid key",
        True,
    ),
    "npm token": (_cat("npm_", _of(ALNUM, 36)), "npm token", True),
    "Hugging Face token": (_cat("hf_", _of(string.ascii_letters, 34)), "Hugging Face token", True),
    "Discord bot token": (_discord, "Discord bot token", True),
    "Telegram bot token": (
        _cat(_of(string.digits, 10), ":AA", _of(URL_SAFE, 33)),
        "Telegram bot token",
        True,
    ),
    "Azure storage account key": (
        _cat(
            "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=",
            _of(BASE64, 86),
            "==;EndpointSuffix=core.windows.net",
        ),
        "Azure connection string",
        True,
    ),
    "Azure AD client secret": (
        _cat(_of(ALNUM, 3), _of(string.digits, 1), "Q~", _of(ALNUM + "_~.-", 34)),
        "Azure client secret",
        True,
    ),
    "JSON web token": (_jwt, "session token", True),
    "Twilio API key": (_cat("SK", _of(HEX, 32)), "Twilio key", True),
    "Mailchimp API key": (_cat(_of(HEX, 32), "-us", _of(string.digits, 2)), "Mailchimp key", True),
    "PyPI upload token": (_cat("pypi-AgEIcHlwaS5vcmc", _of(URL_SAFE, 120)), "PyPI token", True),
    "DigitalOcean PAT": (_cat("dop_v1_", _of(HEX, 64)), "DigitalOcean token", True),
    "Shopify access token": (_cat("shpat_", _of(HEX, 32)), "Shopify token", True),
    "Databricks token": (_cat("dapi", _of(HEX, 32)), "Databricks token", True),
    "Linear API key": (_cat("lin_api_", _of(ALNUM, 40)), "Linear key", True),
    "Doppler token": (_cat("dp.pt.", _of(ALNUM, 43)), "Doppler token", True),
    "Postman API key": (_cat("PMAK-", _of(HEX, 24), "-", _of(HEX, 34)), "Postman key", True),
    "New Relic user key": (_cat("NRAK-", _of(UPPER_ALNUM, 27)), "New Relic key", True),
    "Grafana service account token": (
        _cat("glsa_", _of(ALNUM, 32), "_", _of(HEX, 8)),
        "Grafana token",
        True,
    ),
    "Vault service token": (_cat("hvs.CAESI", _of(URL_SAFE, 90)), "Vault token", True),
    "age secret key": (_cat("AGE-SECRET-KEY-1", _of(BECH32, 58)), "age key", True),
    "Square access token": (_cat("sq0atp-", _of(URL_SAFE, 22)), "Square token", True),
    "Heroku API key": (_cat("HRKU-AA", _of(URL_SAFE, 58)), "Heroku key", True),
    "PlanetScale token": (_cat("pscale_tkn_", _of(URL_SAFE, 43)), "PlanetScale token", True),
    "Sentry user token": (_cat("sntryu_", _of(HEX, 64)), "Sentry token", True),
    "Groq API key": (_cat("gsk_", _of(ALNUM, 52)), "Groq key", True),
    "Docker Hub PAT": (_cat("dckr_pat_", _of(URL_SAFE, 27)), "Docker Hub token", True),
    "Replicate token": (_cat("r8_", _of(ALNUM, 37)), "Replicate token", True),
    "Perplexity API key": (_cat("pplx-", _of(ALNUM, 48)), "Perplexity key", True),
    "Supabase token": (_cat("sbp_", _of(HEX, 40)), "Supabase token", True),
    "Tailscale auth key": (
        _cat("tskey-auth-", _of(ALNUM, 12), "-", _of(ALNUM, 32)),
        "Tailscale key",
        True,
    ),
    "Basic auth header": (_cat("Authorization: Basic ", _basic), "header", True),
    "Bearer token": (_cat("Authorization: Bearer ", _of(URL_SAFE, 40)), "header", True),
    "URL with a password": (
        _cat("postgres://app:", _of(ALNUM, 14), "@db.internal:5432/app"),
        "database URL",
        True,
    ),
    "Generic API key": (_of(ALNUM, 32), "API key", False),
    "Datadog API key": (_of(HEX, 32), "Datadog API key", False),
    "Hex token": (_of(HEX, 40), "token", False),
    "Password with digits": (_password, "password", False),
    "Passphrase, letters only": (_passphrase, "password", False),
}

# style -> templates; {label} and {v}; a template after "||" is held out.
STYLES: dict[str, tuple[str, ...]] = {
    "bare": ("{v}", "here you go {v}", "||{v} (from the dashboard)", "||see {v}"),
    "keyword": ("{label}: {v}", "{env}={v}", "||{label} = {v}", "||{env}: '{v}'"),
    "sentence": (
        "Remember that the {label} for the staging account Bob set up last week is {v}, ok?",
        "I just created a {label} and it is {v} so please keep it somewhere safe.",
        "||Note to self: the {label} we use in prod is {v} until the rotation in March.",
        "||{v} is the {label} Alice gave me.",
    ),
    "markdown": (
        "- **{label}**: `{v}`",
        "| {label} | **{v}** |",
        "||* the {label} is `{v}`",
        "||> **{label}:** _{v}_",
    ),
    "language": (
        "Le mot de passe du compte est {v}",
        "Der Schlüssel für {label} lautet: {v}",
        "La clave de {label} es {v}",
        "||A chave do {label} é {v}",
        "||La chiave per {label} è {v}",
        "||mot de passe du wifi : {v}",
    ),
}
PASSWORD_STYLES: dict[str, tuple[str, ...]] = {
    "keyword": ("password: {v}", "||PASSWORD={v}"),
    "sentence": ("my bank password is {v}", "||the wifi password for the guest network is {v}"),
    "markdown": ("- **password**: `{v}`", "||| wifi password | {v} |"),
    "language": (
        "mot de passe du wifi: {v}",
        "das Passwort ist {v}",
        "la contraseña es {v}",
        "||a senha do banco é {v}",
        "||la password del router è {v}",
    ),
}


def secrets(per_style: int = 1, seed: int = SEED) -> list[Case]:
    """Every kind in every style that applies to it (`per_style` cases each, tuning and held
    out alternating), and the private keys."""
    rng = random.Random(seed)
    cases: list[Case] = []
    for kind, (make, label, alone) in KINDS.items():
        password = kind.startswith(("Password", "Passphrase"))
        styles = PASSWORD_STYLES if password else STYLES
        for style, templates in styles.items():
            if style == "bare" and not alone:
                continue
            for n in range(per_style * 2):
                held = n % 2 == 1
                pool = [t for t in templates if t.startswith("||") == held] or list(templates)
                template = rng.choice(pool).removeprefix("||")
                value = make(rng)
                env = label.upper().replace(" ", "_").replace(".", "")
                text = template.format(label=label, v=value, env=env)
                cases.append(Case(kind, style, text, _secret_part(kind, value), held))
    cases.extend(_private_keys(rng))
    return cases


def _secret_part(kind: str, value: str) -> str:
    """The part of a value that must not survive (a connection string's key, not its host)."""
    if kind == "Azure storage account key":
        return value.split("AccountKey=")[1].split(";")[0]
    if kind in ("Basic auth header", "Bearer token"):
        return value.split()[-1]
    if kind == "URL with a password":
        return value.split(":")[2].split("@")[0]
    return value


def _private_keys(rng: random.Random) -> list[Case]:
    armours = {
        "RSA private key": ("-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----"),
        "PKCS#8 private key": ("-----BEGIN PRIVATE KEY-----", "-----END PRIVATE KEY-----"),
        "EC private key": ("-----BEGIN EC PRIVATE KEY-----", "-----END EC PRIVATE KEY-----"),
        "OpenSSH private key": (
            "-----BEGIN OPENSSH PRIVATE KEY-----",
            "-----END OPENSSH PRIVATE KEY-----",
        ),
        "PGP private key block": (
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\nComment: exported\n",
            "=" + _of(BASE64, 4)(rng) + "\n-----END PGP PRIVATE KEY BLOCK-----",
        ),
    }
    cases = []
    for n, (kind, (begin, end)) in enumerate(armours.items()):
        for held in (False, True):
            body = (*(_of(BASE64, 64)(rng) for _ in range(6)), _of(BASE64, 20)(rng) + "==")
            block = "\n".join((begin, *body, end))
            if held:
                text = f"- the deploy key:\n\n```\n{block}\n```\n- rotate it yearly"
            elif n % 2:
                text = f"here is my key {block}".replace("\n", " ")  # pasted on one line
            else:
                text = f"# Keys\n{block}\n- rotate it yearly"
            cases.append(Case(kind, "markdown" if held else "bare", text, body[0], held, body))
    return cases

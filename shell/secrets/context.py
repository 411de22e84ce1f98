"""Secrets written in plain words: a token near a word such as secret, key, token or password,
in the same sentence ("the secret for the prod account Bob set up is wJalrXUtnFEMI/K7MDENG/…",
"api token: 9f3c…", "my bank password is correcthorsebatterystaple", "mot de passe du wifi: …").

Memory keeps exact identifiers (commit hashes, UUIDs, file names) that look random and are not
secret, so a random-looking token counts only in that context:

- **The words.** Secret, token, key, credential, api, auth and password (passwd, passphrase,
  passcode, pwd) in English, French (secret, jeton, clé, mot de passe, mdp, identifiants),
  German (Geheimnis, Token, Schlüssel, Passwort, Kennwort, Zugangsdaten), Spanish (secreto,
  clave, contraseña, credenciales), Portuguese (segredo, chave, senha, palavra-passe) and
  Italian (segreto, chiave, parola d'ordine, credenziali); plural too, and inside names
  (`api_key`, `AWS_SECRET_ACCESS_KEY`, `clientSecret`).
- **The sentence.** The token may come anywhere after the word up to the end of the sentence
  (25 words at most), or up to five words before it ("wJalr… is the secret"). Markdown around
  a token (`**…**`, backticks, quotes, a table's bars) is not part of it.
- **A random token** is 16 characters or more of base64 or hex with letters and digits that
  looks random: hex above 3 bits of Shannon entropy, mixed case or base64 symbols above 3 bits,
  or lower case and digits above 3.8 bits; not camel-case or dashed words.
- **A password** needs no randomness: after a password word and a joiner ("is", ":", "=", "est",
  "ist", "es", "é", "è", …) the next token is the password, with a digit or a symbol (six
  characters or more), or in letters only (eight or more: "correcthorsebatterystaple") unless
  it is a word that describes a password ("required", "expired", "incorrect", …). Code's own
  names after `password =` (`self.password`, `os.environ[…]`, `PASSWORD_ENV`, `{password}`)
  are not passwords.
- **Kept on purpose:** UUIDs, URLs, paths and e-mail addresses, and any token named as an
  identifier on the way or just before the word (commit, sha, hash, digest, checksum, id, uuid,
  revision, ref, fingerprint, public, etag, nonce: "the key commit is 4f9a…", "key id 3f2a…",
  "the public key is AAAAC3…").
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

_LETTER_BEFORE, _LETTER_AFTER = r"(?<![^\W\d_])", r"(?![^\W\d_])"
_CAMEL_BEFORE, _CAMEL_AFTER = r"(?-i:(?<=[a-z])(?=[A-Z]))", r"(?-i:(?=[A-Z]))"
_GLUED_BEFORE = r"(?-i:(?<=[A-Z])(?=PASSWORD|PASSWD|SECRET|TOKEN))"
"""After capitals: `PGPASSWORD`, `DBSECRET`; not KEY, which ends too many words (MONKEY)."""
PASSWORD_WORDS = (
    r"passwor(?:d|t)(?:s|e|er)?|passwd|passphrases?|passcodes?|pwd|kennw[oö]rt(?:er)?|mdp"
    r"|mots? de passe|contrase[ñn]as?|senhas?|palavras?-passe|parol[ae] d['’]ordine"
    r"|wachtwoord|has[łl]o|codes? secrets?|c[óo]digos? secretos?|codice segreto|geheimzahl"
    r"|codes? wi-?fi|pw|pass(?=\s*[:=]|\s+(?:is|was)\s)"
)
_OTHER_WORDS = (
    r"secrets?|secretos?|secretas?|secr[eè]tes?|geheim\w*|segred[oa]s?|segret[oi]"
    r"|tokens?|jetons?|keys?|cl[ée]s?|clef|schl[üu]ssel|schluessel|claves?|chaves?|chiav[ei]"
    r"|apikeys?|api|auth|credentials?|creds|identifiants|zugangsdaten|credenciales|credenciais"
    r"|credenziali"
)
_KEYWORD = re.compile(
    rf"(?:{_LETTER_BEFORE}|{_CAMEL_BEFORE}|{_GLUED_BEFORE})(?:(?P<password>{PASSWORD_WORDS})|{_OTHER_WORDS})"
    rf"(?:{_LETTER_AFTER}|{_CAMEL_AFTER})",
    re.IGNORECASE,
)
_JOINERS = frozenset(
    {
        "is", "was", "are", "were", "be", "equals", ":", "=", ":=", "->", "=>", "|", "-", "—",
        "–", "est", "était", "sera", "ist", "war", "lautet", "es", "era", "será", "é", "è",
        "sono", "être", "sein", "c'est", "c’est", "it's", "it’s",
    }
)  # fmt: skip
_IDENTIFIER_WORDS = frozenset(
    {
        "commit", "commits", "sha", "sha1", "sha-1", "sha256", "sha-256", "hash", "hashes",
        "digest", "checksum", "id", "ids", "uuid", "revision", "rev", "ref", "fingerprint",
        "public", "pub", "publishable", "etag", "nonce", "ssh-rsa", "ssh-ed25519",
        "ecdsa-sha2-nistp256",
    }
)  # fmt: skip
_DESCRIBES_A_PASSWORD = frozenset(
    {
        "required", "incorrect", "correct", "invalid", "wrong", "expired", "missing",
        "optional", "needed", "necessary", "mandatory", "changed", "stored", "protected",
        "encrypted", "hashed", "insecure", "unknown", "hidden", "visible", "different",
        "temporary", "updated", "generated", "something", "anything", "nothing", "everything",
        "literally", "probably", "obviously", "definitely", "actually", "really", "complex",
        "complicated", "personal", "available", "unavailable", "somewhere", "elsewhere",
        "whatever", "unchanged", "obligatoire", "requis", "incorrecte", "erforderlich",
        "falsch", "obligatorio", "obligatoria", "incorrecta", "incorrecto", "obrigatória",
        "obrigatorio", "obrigatoria", "incorreta", "obbligatoria", "sbagliata", "scaduta",
        "abgelaufen", "caducada", "expirée", "expirada", "password", "passwords", "username",
        "unsecure", "reusable", "identical", "strongest", "shortest", "longest",
    }
)  # fmt: skip
_ENGLISH_ENDINGS = (
    "ed", "ing", "ly", "ion", "ions", "able", "ible", "ment", "ness", "ity", "ous", "ive",
    "ful", "less", "ary", "ory", "ent", "ant", "ence", "ance", "ize", "ise",
)  # fmt: skip
_OPENING, _CLOSING = "\"'`([{<*_~>|“‘«", "\"'`)]}>,;!?.*_~|”’»"
_CLOSING_MARKS = "\"'`)]}>*_~”’»"
"""What may close a word after its sentence's end or a password's own punctuation."""
_SENTENCE_END = (".", "!", "?")
_WORD = re.compile(r"[^\s<>]+")
"""A word; an XML tag's brackets part words too: `<password>hunter22</password>`."""
_URL_PART = re.compile(r"[^?&#;]+")
_BULLET = re.compile(r"^\s*(?:[-*+>]|\d+[.)])\s+")
_SPLIT = re.compile(r"^(?P<name>[\w.\"'-]+?)(?P<join>:=|=>|=|:(?!//))(?P<value>.+)$")
_MARKER = re.compile(r"\[REDACTED [^\]]*\]")
_BASE64 = re.compile(r"[A-Za-z0-9+/=_\-.~]+")
_HEX = re.compile(r"[0-9a-fA-F]+")
_LOWER_ALNUM = re.compile(r"[a-z0-9_-]+")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_WORD_RUN = re.compile(r"[A-Z]?[a-z]{2,}")
_JOINED_WORDS = re.compile(r"[a-z][-_./][a-zA-Z]|[a-z][A-Z]")
_CODE_NAME = re.compile(r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+|[A-Za-z]+(?:_[A-Za-z]+)+|[$%{@&].*")
_CAMEL = re.compile(r"[A-Z]?[a-z]+(?:[A-Z][a-z]+)+")
_DASHED_WORDS = re.compile(r"[a-z]+(?:-[a-z]+)+")
_PRINTABLE = re.compile(r"[!-~\u00a0-\uffff]+")
LOOK_AHEAD, LOOK_BEHIND, IDENTIFIER_REACH = 25, 5, 3
MIN_LENGTH, MIN_ASSIGNED, MIN_PASSWORD_LENGTH, MIN_WORDS_PASSWORD_LENGTH = 16, 12, 6, 8


@dataclass(frozen=True)
class _Piece:
    """A word of the line without its markdown, or a joiner split from it (`name=value`)."""

    text: str
    start: int
    ends_sentence: bool
    loose: str = ""
    """The word with its punctuation (`Soleil2024!`), when it is the piece's text and more."""


def secrets_after_keywords(line: str, above: str = "") -> Iterator[str]:
    """Each token of `line` that is a secret by the rules above (as written, once each).

    `above` is the line before: when it ends in a secret's name and a joiner ("the AWS secret
    is:") and `line` is a single token, that token is read as coming after it."""
    carried = _carried(above, line)
    text = f"{carried} {line}" if carried else line
    pieces = _pieces(_MARKER.sub(lambda marker: " " * len(marker.group()), text))
    starts = [piece.start for piece in pieces]
    ends = [piece.start + len(piece.text) for piece in pieces]
    redacted = [marker.start() for marker in _MARKER.finditer(text)]
    found: set[str] = set()
    for keyword in _KEYWORD.finditer(text):
        first = bisect_left(starts, keyword.end())
        last = bisect_right(ends, keyword.start())
        reach = ends[min(first + LOOK_AHEAD, len(ends)) - 1] if first < len(ends) else 0
        if any(keyword.end() <= at <= reach for at in redacted):
            continue  # its secret is redacted already: what follows the marker is not it
        before = list(range(max(0, last - max(LOOK_BEHIND, IDENTIFIER_REACH)), last))
        if _identifier_before(pieces, before[-IDENTIFIER_REACH:]):
            continue  # "the sha256 of the key file is 9f86…"
        password = keyword.group("password") is not None
        token = _after(pieces[first : first + LOOK_AHEAD], password=password)
        token = token or _before(pieces, before[-LOOK_BEHIND:])
        if token and (not carried or token in line):
            found.add(token)
    yield from sorted(found)


def _carried(above: str, line: str) -> str:
    """The end of `above` from its last secret word, when it ends in a joiner and `line` is one
    token (a bullet or markdown aside); else ""."""
    if (
        not above
        or above.lstrip().startswith("#")
        or len(_bare(_BULLET.sub("", line)).split()) != 1
    ):
        return ""
    end = above.rstrip().rstrip(_CLOSING_MARKS).rstrip()
    if not (end.endswith((":", "=")) or end.rsplit(None, 1)[-1:] in (["is"], ["est"], ["ist"])):
        return ""
    keywords = list(_KEYWORD.finditer(end))
    if not keywords or len(end[keywords[-1].start() :].split()) > 8:
        return ""
    return end[keywords[-1].start() :]


def _after(pieces: list[_Piece], *, password: bool) -> str | None:
    joined = True  # the word itself, as in "password hunter22"
    for position, piece in enumerate(pieces):
        word = piece.text.lower()
        if word in _IDENTIFIER_WORDS:
            return None
        after_joiner = position > 0 and joined
        assigned = position == 1 and after_joiner  # api_token = …, "key": "…", the key is …
        if _is_random(piece.text, short=assigned):
            return piece.text
        if password and joined and _is_password(piece.text, after_joiner=after_joiner):
            return piece.loose or piece.text
        joined = word in _JOINERS or (joined and _KEYWORD.fullmatch(piece.text) is not None)
        if piece.ends_sentence:
            return None
    return None


def _before(pieces: list[_Piece], indices: list[int]) -> str | None:
    for i in reversed(indices):
        if pieces[i].ends_sentence:
            return None
        if _is_random(pieces[i].text) and not _identifier_before(pieces, [i - 2, i - 1]):
            return pieces[i].text
    return None


def _identifier_before(pieces: list[_Piece], indices: list[int]) -> bool:
    return any(i >= 0 and pieces[i].text.lower() in _IDENTIFIER_WORDS for i in indices)


def _pieces(line: str) -> list[_Piece]:
    pieces: list[_Piece] = []
    for word in _WORD.finditer(line):
        if "://" not in word.group():
            _add_word(pieces, word.group(), word.start())
            continue
        for part in _URL_PART.finditer(word.group()):  # ?api_key=…&page=2
            _add_word(pieces, part.group(), word.start() + part.start())
    return pieces


def _add_word(pieces: list[_Piece], raw: str, at: int) -> None:
    ends = raw.rstrip(_CLOSING_MARKS).endswith(_SENTENCE_END)
    while True:  # name=value, as often as it nests: --from-literal=password=…
        stripped = raw.lstrip(_OPENING)
        split = _SPLIT.match(stripped)
        if not split:
            break
        at += len(raw) - len(stripped)
        if name := _bare(split.group("name")):
            pieces.append(_Piece(name, at + split.start("name"), False))
        pieces.append(_Piece(split.group("join"), at + split.start("join"), False))
        raw, at = split.group("value"), at + split.start("value")
    text = _bare(raw)
    if text.endswith((":", "=")) and len(text) > 1:
        pieces.append(_Piece(text.rstrip(":="), at, False))
        pieces.append(_Piece(text[-1], at + len(raw) - 1, ends))
    elif text:
        loose = raw.lstrip(_OPENING).rstrip(_CLOSING_MARKS)
        loose = loose if loose.startswith(text) and loose != text else ""
        pieces.append(_Piece(text, at + raw.find(text), ends, loose))


def _bare(text: str) -> str:
    bare = text.strip(_OPENING + _CLOSING)
    return bare if bare else text.strip("\"'`*_~()[]{}<>")


def _is_random(token: str, *, short: bool = False) -> bool:
    """Whether `token` looks random: 16 characters or more, or 12 when it is assigned to the
    secret's name (`confluent_token = 4xq9…`)."""
    if len(token) < (MIN_ASSIGNED if short else MIN_LENGTH) or _not_secret(token):
        return False
    if not _BASE64.fullmatch(token):
        return False
    if not any(c.isdigit() for c in token) or not any(c.isalpha() for c in token):
        return False
    if _HEX.fullmatch(token):
        return _entropy(token) > 3.0
    if _looks_like_words(token):
        return False
    if _LOWER_ALNUM.fullmatch(token):
        return (short or len(token) >= 20) and _entropy(token) > (3.0 if short else 3.8)
    mixed_case = any(c.islower() for c in token) and any(c.isupper() for c in token)
    symbols = any(c in "+/=" for c in token)
    return (mixed_case or symbols) and _entropy(token) > 3.0


def _is_password(token: str, *, after_joiner: bool) -> bool:
    """Whether `token`, right after a password word (and a joiner when `after_joiner`), is the
    password itself."""
    if len(token) < MIN_PASSWORD_LENGTH or not _PRINTABLE.fullmatch(token) or _not_secret(token):
        return False
    lowered = token.lower()
    if lowered in _DESCRIBES_A_PASSWORD or lowered in _JOINERS:
        return False
    if _KEYWORD.fullmatch(token.lstrip("0123456789")):
        return False  # "the password manager is 1Password"
    if _CODE_NAME.fullmatch(token) or any(c in "()[]{}" for c in token):
        return False
    letters = token.replace("-", "").replace("'", "")
    if letters.isalpha():
        return after_joiner and _is_passphrase(token)
    return _entropy(token) > 2.0


def _is_passphrase(token: str) -> bool:
    """Whether a token of letters only is a password, not a word that describes one."""
    if _DASHED_WORDS.fullmatch(token):
        return token.count("-") >= 3 and len(token) >= 20  # correct-horse-battery-staple
    if _CAMEL.fullmatch(token) and sum(c.isupper() for c in token) > 1:
        return False  # SecretStr, PasswordField
    if len(token) < MIN_WORDS_PASSWORD_LENGTH or _entropy(token) <= 2.5:
        return False
    return len(token) >= 16 or not token.lower().endswith(_ENGLISH_ENDINGS)


def _not_secret(token: str) -> bool:
    """A UUID, a URL, a path or an e-mail address."""
    if _UUID.search(token) or "://" in token or ("@" in token.strip("@") and "." in token):
        return True
    return token.startswith(("/", "~/", "./", "../")) or token.lower() in _IDENTIFIER_WORDS


def _looks_like_words(token: str) -> bool:
    """Camel-case or dashed words (`feature-flag-rollout-2026`, `getUserById2`): words joined
    by a mark or a capital cover most of the token, with few digits."""
    if not _JOINED_WORDS.search(token):
        return False  # one run of letters and digits: random, however it reads
    covered = sum(len(run) for run in _WORD_RUN.findall(token))
    digits = sum(c.isdigit() for c in token)
    return covered >= 0.7 * len(token) and digits <= 4


def _entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())

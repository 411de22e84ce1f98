"""The token a local server wants (`cairn serve`, `cairn mcp --http`): given, or made.

A loopback bind and an `Origin` check stop a browser's other pages, not a local process or
another user of the machine, which sends no `Origin` at all: the token is what they lack.
"""

from __future__ import annotations

import hmac
import re
import secrets
from collections.abc import Mapping

TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_-]{16,}")
"""What a token may be: URL-safe (`serve` carries it in a page's query and a websocket's path,
unquoted; `mcp` in a header) and long enough not to be guessed."""


def server_token(given: str | None, environ: Mapping[str, str], variable: str) -> str:
    """`given` (a `--token`), else `environ[variable]`, else a new random one.

    Raises:
        ConfigError: the token given is not `TOKEN_SHAPE`.
    """
    from shell.config import ConfigError

    token = given if given is not None else environ.get(variable)
    if token is None:
        return secrets.token_urlsafe(32)
    if not TOKEN_SHAPE.fullmatch(token):
        source = "--token" if given is not None else variable
        raise ConfigError(f"{source} must be at least 16 characters of A-Z, a-z, 0-9, '_' and '-'")
    return token


def token_matches(expected: str, offered: str | None) -> bool:
    """Whether `offered` is the token, compared in constant time (bytes: any text is allowed)."""
    if offered is None:
        return False
    return hmac.compare_digest(expected.encode(), offered.encode())

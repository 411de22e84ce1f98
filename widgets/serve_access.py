"""Who may open a TUI that `cairn serve` runs: the holder of its token, a few at a time.

The token is the only thing a local process or another user on the machine lacks: a loopback
bind and the `Origin` check stop a browser's other pages, not a client that sends no `Origin`.
"""

from __future__ import annotations

import hmac
import re
import secrets
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

TOKEN_ENV = "CAIRN_SERVE_TOKEN"

TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_-]{16,}")
"""What `--token` and `$CAIRN_SERVE_TOKEN` may be: URL-safe (it travels in the page's query and
the websocket's path, unquoted) and long enough not to be guessed."""

SECURITY_HEADERS: Mapping[str, str] = {
    "Content-Security-Policy": "frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    # The page's URL holds the token: a link the TUI opens must not carry it to another site.
    "Referrer-Policy": "no-referrer",
}
"""On every response: no page may frame the shell (a click-jacking page could type into it)."""


def serve_token(given: str | None, environ: Mapping[str, str]) -> str:
    """`--token`, else `$CAIRN_SERVE_TOKEN`, else a new random one."""
    from shell.config import ConfigError

    token = given if given is not None else environ.get(TOKEN_ENV)
    if token is None:
        return secrets.token_urlsafe(32)
    if not TOKEN_SHAPE.fullmatch(token):
        source = "--token" if given is not None else TOKEN_ENV
        raise ConfigError(f"{source} must be at least 16 characters of A-Z, a-z, 0-9, '_' and '-'")
    return token


def token_matches(expected: str, offered: str | None) -> bool:
    """Whether `offered` is the token, compared in constant time (bytes: any text is allowed)."""
    if offered is None:
        return False
    return hmac.compare_digest(expected.encode(), offered.encode())


class Sessions:
    """The TUIs running for connections, at most `limit` at once."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.running = 0

    @property
    def full(self) -> bool:
        return self.running >= self.limit

    @property
    def refusal(self) -> str:
        return (
            f"cairn serve runs as many sessions as --max-sessions allows ({self.limit}): "
            "close one, then reload this page"
        )

    @contextmanager
    def held(self) -> Iterator[None]:
        """One session for the duration; the caller checked `full` with no await in between."""
        self.running += 1
        try:
            yield
        finally:
            self.running -= 1

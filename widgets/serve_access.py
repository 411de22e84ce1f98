"""Who may open a TUI that `cairn serve` runs: the holder of its token, a few at a time.

The token is the only thing a local process or another user on the machine lacks: a loopback
bind and the `Origin` check stop a browser's other pages, not a client that sends no `Origin`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from shell.access import TOKEN_SHAPE, server_token, token_matches

__all__ = [
    "SECURITY_HEADERS",
    "TOKEN_ENV",
    "TOKEN_SHAPE",
    "Sessions",
    "serve_token",
    "token_matches",
]

TOKEN_ENV = "CAIRN_SERVE_TOKEN"

SECURITY_HEADERS: Mapping[str, str] = {
    "Content-Security-Policy": "frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    # The page's URL holds the token: a link the TUI opens must not carry it to another site.
    "Referrer-Policy": "no-referrer",
}
"""On every response: no page may frame the shell (a click-jacking page could type into it)."""


def serve_token(given: str | None, environ: Mapping[str, str]) -> str:
    """`--token`, else `$CAIRN_SERVE_TOKEN`, else a new random one (`shell.access`)."""
    return server_token(given, environ, TOKEN_ENV)


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

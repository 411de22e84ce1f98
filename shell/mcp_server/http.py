"""`cairn mcp --http`: the memory server on streamable HTTP, on loopback, behind a token.

Only a loopback address is served (a wider one is refused: whoever reaches it could write the
memory). Every request must carry the token as `Authorization: Bearer <token>` (401 without
it, or with another); a request whose `Host` is not this server's loopback address and port is
refused (421: DNS rebinding), and so is one whose `Origin` is another site's (403: a page in a
browser). The token is compared in constant time, never logged, and never in a URL. The SDK's
own checks (its Host and Origin allow-lists, a 4 MiB body limit) run behind these.
"""

from __future__ import annotations

import ipaddress
import signal
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from types import FrameType
from typing import TYPE_CHECKING, Any

from shell.access import token_matches

if TYPE_CHECKING:
    from shell.mcp_server.server import MemoryServer

TOKEN_ENV = "CAIRN_MCP_TOKEN"
PATH = "/mcp"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass(frozen=True)
class HttpPlan:
    """Where `cairn mcp --http` listens, and the token it wants."""

    host: str
    port: int
    token: str = field(repr=False)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{PATH}"

    @property
    def line(self) -> str:
        return (
            f"Cairn's memory is served over MCP at {self.url} (ctrl+c stops it); send the "
            f"header 'Authorization: Bearer {self.token}'"
        )

    @property
    def hosts(self) -> frozenset[str]:
        """The `Host` values a request may carry: a loopback name and this port."""
        return frozenset(f"{name}:{self.port}" for name in LOOPBACK_NAMES)

    @property
    def origins(self) -> frozenset[str]:
        """The `Origin` a browser page may send: this server's own."""
        return frozenset(f"http://{host}" for host in self.hosts)


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on `host`:`port` (0: any free port)."""
    from shell.config import ConfigError

    if not is_loopback(host):
        raise ConfigError(
            f"cairn mcp serves on a loopback address only (127.0.0.1, ::1), not {host}: "
            "whoever reaches it reads and writes this memory"
        )
    if not 0 <= port < 65536:
        raise ConfigError(f"--port must be between 0 and 65535, not {port}")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {error.strerror}") from None
    sock.listen(64)
    return sock


class Guard:
    """In front of the SDK's app: the Host, the Origin and the token of every HTTP request."""

    def __init__(self, app: App, plan: HttpPlan) -> None:
        self.app = app
        self.plan = plan

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and (refusal := self.refusal(scope)) is not None:
            status, text, extra = refusal
            headers = [(b"content-type", b"text/plain; charset=utf-8"), *extra]
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": text.encode()})
            return
        await self.app(scope, receive, send)

    def refusal(self, scope: Scope) -> tuple[int, str, list[tuple[bytes, bytes]]] | None:
        """(status, text, headers) for a request refused, None for one let through."""
        headers = _headers(scope)
        if headers.get("host") not in self.plan.hosts:
            return 421, "cairn mcp answers only on its loopback address and port", []
        origin = headers.get("origin")
        if origin is not None and origin not in self.plan.origins:
            return 403, "cairn mcp refuses a request from another origin", []
        scheme, _, offered = (headers.get("authorization") or "").partition(" ")
        if scheme.lower() != "bearer" or not token_matches(self.plan.token, offered.strip()):
            challenge = [(b"www-authenticate", b'Bearer realm="cairn mcp"')]
            return 401, "cairn mcp wants its token: Authorization: Bearer <token>", challenge
        return None


def _headers(scope: Scope) -> dict[str, str]:
    """The request's headers, by lower-case name; a repeated one counts as absent."""
    seen: dict[str, str] = {}
    repeated: set[str] = set()
    for raw_name, raw_value in scope.get("headers", []):
        name = raw_name.decode("latin-1").lower()
        if name in seen:
            repeated.add(name)
        seen[name] = raw_value.decode("latin-1")
    return {name: value for name, value in seen.items() if name not in repeated}


async def serve_http(
    server: MemoryServer, plan: HttpPlan, sock: socket.socket, say: Callable[[str], None]
) -> None:
    """Serve until ctrl+c or SIGTERM (uvicorn's own handlers); `say` gets the line that says
    where, once the socket listens."""
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    sdk = server.sdk()
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=sorted(plan.hosts),
        allowed_origins=sorted(plan.origins),
    )
    app = sdk.streamable_http_app(
        streamable_http_path=PATH, transport_security=security, host=plan.host
    )
    config = uvicorn.Config(Guard(app, plan), log_level="warning", access_log=False, lifespan="on")
    await server.start()
    # uvicorn raises the signal that stopped it again once it is done, which would end the
    # process before the push the writes owe: the signal it raises again finds a no-op.
    previous = {sig: signal.signal(sig, _stopped) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        say(plan.line)
        await uvicorn.Server(config).serve(sockets=[sock])
    finally:
        await server.aclose()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _stopped(_signal: int, _frame: FrameType | None) -> None:
    """What a signal uvicorn raised again does here: nothing (it has stopped serving)."""

"""`cairn serve`: the same TUI in a browser, through textual-serve.

Each browser connection starts `cairn` with the options `serve` was given (the TUI's own
command line, quoted with `shlex.join`) under textual-serve's web driver. The server binds
127.0.0.1 unless `--host` says otherwise; a wider address prints a warning first, since whoever
reaches it drives the agent on this workspace.

Nothing comes from the network at run time: textual-serve bundles xterm.js, its CSS and the
Roboto Mono fonts, but its page asks Google Fonts for the font; the page served here declares
the bundled fonts instead. A browser's other pages may not drive the shell: the websocket
refuses a foreign `Origin`, and a loopback server answers only to a loopback `Host` (a
DNS-rebinding name pointed at 127.0.0.1 gets a 403). Neither stops a local process, which
sends no `Origin` at all: the page and the websocket both want the token `serve` prints in its
URL (`widgets/serve_access.py`), a few sessions run at once (`--max-sessions`), and no page may
frame the shell.

The token reaches the websocket in its path (`/ws/<token>`): textual-serve's script opens the
page's `data-session-websocket-url` with `?width=…&height=…` appended, so a query there would be
mangled, and a cookie would be shared with every other server on 127.0.0.1, whatever its port.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import os
import re
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from widgets.serve_access import SECURITY_HEADERS, TOKEN_ENV, Sessions, serve_token, token_matches

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})

_GOOGLE_FONTS = re.compile(
    r'<link\s+rel="stylesheet"\s+href="https://fonts\.googleapis\.com[^"]*"\s*/>'
)
_BUNDLED_FONTS = """<style>
      @font-face {
        font-family: "Roboto Mono";
        src: url("{{ config.static.url }}fonts/RobotoMono-VariableFont_wght.ttf")
          format("truetype");
        font-weight: 100 700;
        font-style: normal;
      }
      @font-face {
        font-family: "Roboto Mono";
        src: url("{{ config.static.url }}fonts/RobotoMono-Italic-VariableFont_wght.ttf")
          format("truetype");
        font-weight: 100 700;
        font-style: italic;
      }
    </style>"""


@dataclass(frozen=True)
class ServePlan:
    """What `cairn serve` will do, decided before anything binds."""

    command: str
    """The shell command each browser connection runs: the TUI, with `serve`'s options."""
    host: str
    port: int
    token: str = field(repr=False)
    """What the page and the websocket want before they start a TUI."""
    max_sessions: int = 4

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def page_url(self) -> str:
        return f"{self.url}/?token={self.token}"

    @property
    def line(self) -> str:
        return f"Cairn is served at {self.page_url} (ctrl+c stops it)"

    @property
    def warning(self) -> str | None:
        if is_loopback(self.host):
            return None
        return (
            f"cairn: warning: serving on {self.host}, not 127.0.0.1: anyone who can reach "
            f"{self.url} with the token gets a shell on this workspace (the agent reads and "
            "writes its memory and runs its tools), and the token crosses the network in plain "
            "HTTP."
        )


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def tui_argv(args: argparse.Namespace, workspace: Path) -> list[str]:
    """The TUI's command line for `serve`'s options, with the workspace made absolute (the
    served app resolves it as `serve` did, wherever it starts)."""
    argv = [sys.executable, "-c", "from widgets.served import main; main()"]
    argv += ["--workspace", str(workspace.resolve())]
    for flag, value in (
        ("--model", args.model),
        ("--api-base", args.api_base),
        ("--context-window", args.context_window),
        ("--session", args.session),
        ("--trace", args.trace.resolve() if args.trace is not None else None),
        ("--project", (getattr(args, "project", None) or Path.cwd()).resolve()),
        *(("--allow", rule) for rule in getattr(args, "allow", None) or []),
    ):
        if value is not None:
            argv += [flag, str(value)]
    flags = (("--demo", args.demo), ("--resume", args.resume), ("--yes", args.yes))
    argv += [flag for flag, on in flags if on]
    return argv


def plan_serve(
    args: argparse.Namespace, workspace: Path, environ: Mapping[str, str] = os.environ
) -> ServePlan:
    from shell.config import ConfigError

    if not 0 < args.port < 65536:
        raise ConfigError(f"--port must be between 1 and 65535, not {args.port}")
    if args.max_sessions < 1:
        raise ConfigError(f"--max-sessions must be at least 1, not {args.max_sessions}")
    token = serve_token(args.token, environ)
    # `exec`: the TUI is the server's own child, so it can tell when the server is gone.
    command = "exec " + shlex.join(tui_argv(args, workspace))
    return ServePlan(command, args.host, args.port, token, args.max_sessions)


def served_page() -> str:
    """textual-serve's page with the bundled fonts in place of Google Fonts."""
    page = resources.files("textual_serve").joinpath("templates/app_index.html").read_text()
    page, found = _GOOGLE_FONTS.subn(_BUNDLED_FONTS, page)
    if found != 1:
        raise RuntimeError("textual-serve's page changed: its font link was not found")
    return page


def serve(args: argparse.Namespace, workspace: Path, out: TextIO = sys.stdout) -> int:
    """Serve until ctrl+c or SIGTERM; returns the exit code."""
    plan = plan_serve(args, workspace)
    # The TUIs inherit this process's environment, and their commands the TUIs': not the token.
    os.environ.pop(TOKEN_ENV, None)
    if plan.warning is not None:
        print(plan.warning, file=sys.stderr, flush=True)
    server = _server_class()(plan, out)
    server.serve()
    return 0


def _server_class() -> Any:
    """The server, defined on first use: aiohttp and textual-serve load only for `serve`."""
    import logging

    import aiohttp_jinja2
    import jinja2
    from aiohttp import web
    from textual_serve.server import Server, to_int

    class CairnServer(Server):
        def __init__(self, plan: ServePlan, out: TextIO) -> None:
            super().__init__(plan.command, host=plan.host, port=plan.port, title="Cairn")
            self.plan = plan
            self.out = out
            self.sessions = Sessions(plan.max_sessions)

        def initialize_logging(self) -> None:
            # One line says where; after it, only what went wrong.
            logging.basicConfig(level=logging.WARNING, format="cairn serve: %(message)s")
            # Its lines would carry each request's URL, and so the token.
            logging.getLogger("aiohttp.access").disabled = True

        async def on_startup(self, app: web.Application) -> None:
            # Startup runs before aiohttp binds the port: the line waits until it answers, so
            # whoever reads it (a person, a script, the tests) can connect at once.
            self._said = asyncio.get_running_loop().create_task(self._say_where_once_bound())

        async def _say_where_once_bound(self) -> None:
            for _ in range(600):  # 30 s, then it says where anyway
                try:
                    _, writer = await asyncio.open_connection(self.plan.host, self.plan.port)
                except OSError:
                    await asyncio.sleep(0.05)
                    continue
                writer.close()
                break
            print(self.plan.line, file=self.out, flush=True)

        async def _make_app(self) -> web.Application:
            app = await super()._make_app()
            loader = jinja2.DictLoader({"app_index.html": served_page()})
            aiohttp_jinja2.setup(app, loader=loader)
            app.router.add_get("/ws/{token}", self.handle_websocket)
            app.on_response_prepare.append(self._add_security_headers)
            return app

        async def _add_security_headers(
            self, request: web.Request, response: web.StreamResponse
        ) -> None:
            response.headers.update(SECURITY_HEADERS)

        def _admit(self, request: web.Request, token: str | None) -> None:
            host = (request.url.host or "").strip("[]")
            if is_loopback(self.plan.host) and not is_loopback(host):
                raise web.HTTPForbidden(text="cairn serve answers only on its loopback address")
            if not token_matches(self.plan.token, token):
                raise web.HTTPForbidden(
                    text="cairn serve wants its token: open the URL it printed (…/?token=…)"
                )

        async def handle_index(self, request: web.Request) -> web.StreamResponse:
            self._admit(request, request.query.get("token"))
            if self.sessions.full:
                raise web.HTTPServiceUnavailable(text=self.sessions.refusal)
            # The page's links point where the browser came from: right behind --host 0.0.0.0.
            public = f"http://{request.host}"
            context = {
                "font_size": to_int(request.query.get("fontsize", "16"), 16),
                "app_websocket_url": f"ws://{request.host}/ws/{self.plan.token}",
                "config": {"static": {"url": f"{public}/static/"}},
                "application": {"name": self.title},
            }
            return aiohttp_jinja2.render_template("app_index.html", request, context)

        async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
            # A script may put the token in the query instead: `/ws?token=…&width=…`.
            self._admit(request, request.match_info.get("token") or request.query.get("token"))
            origin = request.headers.get("Origin")
            if origin is not None and origin != f"http://{request.host}":
                raise web.HTTPForbidden(text="cairn serve refuses a page from another origin")
            if self.sessions.full:
                raise web.HTTPServiceUnavailable(text=self.sessions.refusal)
            with self.sessions.held():
                return await super().handle_websocket(request)

    return CairnServer

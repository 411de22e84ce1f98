"""`cairn serve` against the attacks of issue 30, each on a real server with real clients.

What worked before: a websocket with no `Origin` (any local process, any user) started a TUI and
typed into it; every connection started one more TUI; any page could frame the shell.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from email.message import Message
from pathlib import Path

import aiohttp
import pytest

from tests.e2e.test_serve import STOP_BOUND_S, Served, get, serving

WRONG = "A" * 43


async def handshake(url: str, **headers: str) -> int:
    """The status of a websocket handshake at `url` (101: a TUI started for it), sent as a
    script sends it: no `Origin` unless one is given."""
    async with aiohttp.ClientSession() as session:
        try:
            async with session.ws_connect(url, headers=headers):
                return 101
        except aiohttp.WSServerHandshakeError as error:
            return error.status


def session_url(served: Served, token: str) -> str:
    """The websocket URL as the page's script builds it: the page's, then `?width=…`."""
    return f"{served.ws}/ws/{token}?width=80&height=24"


def children(pid: int) -> list[int]:
    """The processes `pid` started that still run: the TUIs of a server."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone since the listing
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def proc(pid: int, name: str) -> bytes:
    return Path(f"/proc/{pid}/{name}").read_bytes()


def headers_of(url: str) -> Message:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.headers
    except urllib.error.HTTPError as error:
        return error.headers


async def test_a_websocket_without_origin_or_token_starts_no_tui(tmp_path: Path) -> None:
    with serving(tmp_path) as served:
        for url in (
            f"{served.ws}/ws?width=80&height=24",  # the attack as it was
            session_url(served, WRONG),
            f"{served.ws}/ws?token={WRONG}&width=80&height=24",
            session_url(served, served.token[:-1]),
            session_url(served, "%C3%A9" * 22),  # not ASCII: refused, not a server error
        ):
            assert await handshake(url) == 403, url
        assert children(served.process.pid) == []

        # A script that holds the token may drive it, in the path or in the query.
        assert await handshake(session_url(served, served.token)) == 101
        query = f"{served.ws}/ws?token={served.token}&width=80&height=24"
        assert await handshake(query) == 101


async def test_the_session_the_page_opens_runs_the_tui(tmp_path: Path) -> None:
    with serving(tmp_path) as served:
        status, page = get(f"{served.url}/?token={served.token}")
        assert status == 200
        [ws_url] = [
            part.split('"')[1] for part in page.split() if part.startswith("data-session-websocket")
        ]
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(f"{ws_url}?width=80&height=24") as ws,
        ):
            first = await ws.receive(timeout=STOP_BOUND_S)
            assert first.type == aiohttp.WSMsgType.BINARY  # the TUI's first screen bytes
            assert len(children(served.process.pid)) == 1


def test_the_page_wants_the_token(tmp_path: Path) -> None:
    with serving(tmp_path) as served:
        status, text = get(f"{served.url}/")
        assert (status, text) == (
            403,
            "cairn serve wants its token: open the URL it printed (…/?token=…)",
        )
        assert get(f"{served.url}/?token={WRONG}")[0] == 403
        assert get(f"{served.url}/?token=")[0] == 403
        assert get(f"{served.url}/?token={served.token}")[0] == 200


async def test_another_origin_is_refused_even_with_the_token(tmp_path: Path) -> None:
    with serving(tmp_path) as served:
        url = session_url(served, served.token)
        assert await handshake(url, Origin="http://evil.example") == 403
        assert await handshake(url, Origin="null") == 403  # a sandboxed frame, a file: page
        assert await handshake(url, Origin=served.url) == 101
        assert get(f"{served.url}/?token={served.token}", Host="evil.example")[0] == 403


async def test_another_user_without_the_token_is_refused(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("becoming another user needs root")
    with serving(tmp_path) as served:
        port = served.url.rsplit(":", 1)[1]
        request = (
            f"GET /ws?width=80&height=24 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
        )
        client = (
            "import socket\n"
            f"s = socket.create_connection(('127.0.0.1', {port}))\n"
            f"s.sendall({request.encode()!r})\n"
            "print(s.recv(200).split(b'\\r\\n')[0].decode())\n"
        )
        as_nobody = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
        done = await asyncio.to_thread(
            subprocess.run,
            [*as_nobody, sys.executable, "-I", "-c", client],
            capture_output=True,
            text=True,
            timeout=STOP_BOUND_S,
        )
        assert done.stdout == "HTTP/1.1 403 Forbidden\n", done.stderr
        assert children(served.process.pid) == []


async def test_serve_runs_at_most_max_sessions(tmp_path: Path) -> None:
    with serving(tmp_path, "--max-sessions", "1") as served:
        page = f"{served.url}/?token={served.token}"
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(session_url(served, served.token)) as first,
        ):
            await first.receive(timeout=STOP_BOUND_S)  # its TUI runs
            assert await handshake(session_url(served, served.token)) == 503
            status, text = await asyncio.to_thread(get, page)
            assert (status, text) == (
                503,
                "cairn serve runs as many sessions as --max-sessions allows (1): close one, "
                "then reload this page",
            )
            assert len(children(served.process.pid)) == 1

        # Its TUI quits when its connection closes, and the slot is free again.
        deadline = time.monotonic() + STOP_BOUND_S
        while (await asyncio.to_thread(get, page))[0] == 503:
            assert time.monotonic() < deadline, "the closed session was never released"
            await asyncio.sleep(0.1)
        assert await handshake(session_url(served, served.token)) == 101


def test_no_page_may_frame_the_shell(tmp_path: Path) -> None:
    with serving(tmp_path) as served:
        for url in (
            f"{served.url}/?token={served.token}",  # the page
            f"{served.url}/",  # its refusal
            f"{served.url}/ws/{WRONG}",  # a websocket's refusal
            f"{served.url}/static/js/textual.js",
            f"{served.url}/no-such-page",
        ):
            headers = headers_of(url)
            assert headers["Content-Security-Policy"] == "frame-ancestors 'none'", url
            assert headers["X-Frame-Options"] == "DENY", url
            assert headers["Referrer-Policy"] == "no-referrer", url


async def test_the_token_from_the_environment_reaches_neither_tui_nor_trace(
    tmp_path: Path,
) -> None:
    token = "a-token-for-scripts-0123456789"
    trace = tmp_path / "trace.jsonl"
    with serving(tmp_path, "--trace", str(trace), CAIRN_SERVE_TOKEN=token) as served:
        assert served.token == token
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(session_url(served, token)) as ws,
        ):
            await ws.receive(timeout=STOP_BOUND_S)
            [tui] = children(served.process.pid)
            environ, command_line = proc(tui, "environ"), proc(tui, "cmdline")
            assert b"CAIRN_SERVE_TOKEN" not in environ
            assert token.encode() not in environ + command_line
    assert token not in (trace.read_text() if trace.exists() else "")

"""`cairn serve`: the TUI through textual-serve, on loopback, stopped by a signal."""

from __future__ import annotations

import argparse
import re
import shlex
import signal
import socket
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from shell.config import ConfigError
from tests.e2e.test_cli import CAIRN, cairn_env
from widgets.cli import build_parser
from widgets.serve import plan_serve, served_page

STOP_BOUND_S = 60  # a safety net for a stuck server, not a timing assertion


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def get(url: str, **headers: str) -> tuple[int, str]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


@dataclass(frozen=True)
class Served:
    """A running `cairn serve`: its address, the token it printed, its process."""

    url: str
    token: str
    process: subprocess.Popen[Any]

    @property
    def ws(self) -> str:
        return "ws" + self.url.removeprefix("http")


@contextmanager
def serving(
    home: Path, *options: str, stop: signal.Signals = signal.SIGTERM, **env: str
) -> Iterator[Served]:
    """`cairn serve --demo` on a free loopback port until the block ends, then stopped: it must
    exit 0 with nothing on stderr (the token never in a log line)."""
    port = free_port()
    args = ["serve", "--port", str(port), "--demo", "--workspace", str(home / "ws"), *options]
    server = subprocess.Popen(
        [str(CAIRN), *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cairn_env(home, **env),
        text=True,
    )
    found = None
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        url = f"http://127.0.0.1:{port}"
        found = re.fullmatch(
            rf"Cairn is served at {url}/\?token=([\w-]+) \(ctrl\+c stops it\)\n", line
        )
        assert found is not None, line
        yield Served(url, found[1], server)
    finally:
        server.send_signal(stop)
        code = server.wait(timeout=STOP_BOUND_S)
    assert server.stderr is not None and server.stdout is not None
    assert (code, server.stderr.read()) == (0, "")
    if found is not None:  # after the line, what a TUI wrote to stderr: never the token
        assert found[1] not in server.stdout.read()


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_serve_answers_on_loopback_and_stops_cleanly(tmp_path: Path, stop: signal.Signals) -> None:
    with serving(tmp_path, stop=stop) as served:
        url, token = served.url, served.token
        status, page = get(f"{url}/?token={token}")
        assert status == 200
        assert f'data-session-websocket-url="{served.ws}/ws/{token}"' in page
        assert "googleapis" not in page  # nothing from the network: the bundled fonts
        assert get(f"{url}/static/js/textual.js")[0] == 200  # xterm.js is served locally
        # Another site's page may not drive the shell, nor may a rebinding name.
        assert get(f"{url}/ws/{token}", Origin="http://evil.example")[0] == 403
        assert get(f"{url}/?token={token}", Host=f"evil.example:{url.rsplit(':')[-1]}")[0] == 403


def serve_args(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["serve", *argv])


def test_serve_stays_on_loopback_unless_told_and_warns_when_it_is_not(tmp_path: Path) -> None:
    default = plan_serve(serve_args(), tmp_path, {})
    assert (default.host, default.port, default.warning) == ("127.0.0.1", 8000, None)
    assert default.line == (
        f"Cairn is served at http://127.0.0.1:8000/?token={default.token} (ctrl+c stops it)"
    )

    wide = plan_serve(serve_args("--host", "0.0.0.0", "--port", "9000"), tmp_path, {})
    assert wide.warning is not None
    assert "anyone who can reach http://0.0.0.0:9000 with the token gets a shell" in wide.warning
    assert "plain HTTP" in wide.warning
    assert wide.token not in wide.warning
    assert plan_serve(serve_args("--host", "::1"), tmp_path, {}).url == "http://[::1]:8000"


def test_each_serve_makes_a_new_token_unless_given_one(tmp_path: Path) -> None:
    first, second = (plan_serve(serve_args(), tmp_path, {}) for _ in range(2))
    assert first.token != second.token
    assert len(first.token) >= 43  # secrets.token_urlsafe(32)
    assert first.token not in repr(first)  # a plan logged or shown in a traceback

    from_env = {"CAIRN_SERVE_TOKEN": "e" * 20}
    assert plan_serve(serve_args(), tmp_path, from_env).token == "e" * 20
    given = serve_args("--token", "g" * 20)
    assert plan_serve(given, tmp_path, from_env).token == "g" * 20  # the flag wins

    with pytest.raises(ConfigError, match="--token must be at least 16 characters"):
        plan_serve(serve_args("--token", "short"), tmp_path, {})
    with pytest.raises(ConfigError, match="CAIRN_SERVE_TOKEN must be"):
        plan_serve(serve_args(), tmp_path, {"CAIRN_SERVE_TOKEN": "a token with spaces in it"})
    with pytest.raises(ConfigError, match="--max-sessions must be at least 1, not 0"):
        plan_serve(serve_args("--max-sessions", "0"), tmp_path, {})
    assert plan_serve(serve_args(), tmp_path, {}).max_sessions == 4


def test_serve_runs_the_tui_with_its_options_quoted(tmp_path: Path) -> None:
    workspace = tmp_path / "a workspace; rm -rf ~"
    project = tmp_path / "the project $(id)"
    project.mkdir()
    args = serve_args(
        "--model",
        "ollama/llama3.1",
        "--api-base",
        "http://h:1/v1",
        "--resume",
        "--project",
        str(project),
        "--allow",
        "run_command:make *",
        "--yes",
    )
    command = plan_serve(args, workspace, {}).command

    assert command.startswith("exec ")
    argv = shlex.split(command)[1:]
    assert argv[1:3] == ["-c", "from widgets.served import main; main()"]
    assert argv[3:] == [
        "--workspace",
        str(workspace.resolve()),
        "--model",
        "ollama/llama3.1",
        "--api-base",
        "http://h:1/v1",
        "--project",
        str(project.resolve()),
        "--allow",
        "run_command:make *",
        "--resume",
        "--yes",
    ]


def test_the_served_page_loads_nothing_from_the_network() -> None:
    page = served_page()
    assert "googleapis" not in page
    assert "fonts/RobotoMono-VariableFont_wght.ttf" in page


def test_the_page_script_still_opens_the_websocket_url_with_a_query_appended() -> None:
    """Why the token is in the websocket's path: textual-serve's script appends `?width=…` to the
    page's URL, so a `?token=` there would swallow the width."""
    from importlib import resources

    script = resources.files("textual_serve").joinpath("static/js/textual.js").read_text()
    assert "this.websocket_url=e.dataset.sessionWebsocketUrl" in script
    assert 'new WebSocket(this.websocket_url+"?width="' in script

"""`cairn serve`: the TUI through textual-serve, on loopback, stopped by a signal."""

from __future__ import annotations

import argparse
import shlex
import signal
import socket
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.test_cli import started
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


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_serve_answers_on_loopback_and_stops_cleanly(tmp_path: Path, stop: signal.Signals) -> None:
    port = free_port()
    args = ["serve", "--port", str(port), "--demo", "--workspace", str(tmp_path / "ws")]
    server = started(*args, home=tmp_path, text=True)
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        url = f"http://127.0.0.1:{port}"
        assert line == f"Cairn is served at {url} (ctrl+c stops it)\n"

        status, page = get(url)
        assert status == 200
        assert f'data-session-websocket-url="ws://127.0.0.1:{port}/ws"' in page
        assert "googleapis" not in page  # nothing from the network: the bundled fonts
        assert get(f"{url}/static/js/textual.js")[0] == 200  # xterm.js is served locally
        # Another site's page may not drive the shell, nor may a rebinding name.
        assert get(f"{url}/ws", Origin="http://evil.example")[0] == 403
        assert get(url, Host=f"evil.example:{port}")[0] == 403
    finally:
        server.send_signal(stop)
        code = server.wait(timeout=STOP_BOUND_S)
    assert server.stderr is not None
    assert (code, server.stderr.read()) == (0, "")


def serve_args(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["serve", *argv])


def test_serve_stays_on_loopback_unless_told_and_warns_when_it_is_not(tmp_path: Path) -> None:
    default = plan_serve(serve_args(), tmp_path)
    assert (default.host, default.port, default.warning) == ("127.0.0.1", 8000, None)
    assert default.line == "Cairn is served at http://127.0.0.1:8000 (ctrl+c stops it)"

    wide = plan_serve(serve_args("--host", "0.0.0.0", "--port", "9000"), tmp_path)
    assert wide.warning is not None
    assert "anyone who can reach http://0.0.0.0:9000 gets a shell on this workspace" in (
        wide.warning
    )
    assert plan_serve(serve_args("--host", "::1"), tmp_path).url == "http://[::1]:8000"


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
    command = plan_serve(args, workspace).command

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

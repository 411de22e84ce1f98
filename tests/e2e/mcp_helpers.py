"""`cairn mcp` under test: a real server process, the MCP SDK's own client, real git."""

from __future__ import annotations

import contextlib
import json
import re
import signal
import subprocess
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import IO, Any

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_types import CallToolResult, Implementation

from tests.e2e.test_cli import CAIRN, cairn, cairn_env

STOP_BOUND_S = 60  # a safety net for a stuck server, not a timing assertion
TODAY = date.today().isoformat()  # the server's clock is the real one
NOTE = f"memory/{TODAY}.md"


def seeded(home: Path, name: str = "ws") -> Path:
    """A workspace made as a user makes one (`cairn init`)."""
    ws = home / name
    done = cairn("init", str(ws), home=home)
    assert done.returncode == 0, done.stderr
    return ws


@contextlib.asynccontextmanager
async def connected(
    ws: Path,
    home: Path,
    *options: str,
    name: str = "test-client",
    version: str = "1.0",
    mode: str = "auto",
    errlog: IO[str] | None = None,
    **env: str,
) -> AsyncIterator[Client]:
    """The SDK's client, connected to `cairn mcp` on stdio (the process it starts)."""
    parameters = StdioServerParameters(
        command=str(CAIRN),
        args=["mcp", "--workspace", str(ws), *options],
        env=cairn_env(home, **{"CAIRN_EMBEDDER": "hash", **env}),
    )
    with contextlib.ExitStack() as stack:
        log = errlog or stack.enter_context((home / "mcp-stderr.log").open("a"))
        transport = stdio_client(parameters, errlog=log)
        info = Implementation(name=name, version=version)
        async with Client(transport, client_info=info, mode=mode) as client:  # type: ignore[arg-type]
            yield client


def text(result: CallToolResult) -> str:
    block = result.content[0]
    assert block.type == "text"
    return block.text


def payload(result: CallToolResult) -> Any:
    assert not result.is_error, text(result)
    return json.loads(text(result))


def git(ws: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(ws), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def head(ws: Path) -> str:
    return git(ws, "rev-parse", "HEAD").strip()


@dataclass(frozen=True)
class Http:
    """A running `cairn mcp --http`: its URL, the token it printed, its process."""

    url: str
    token: str
    process: subprocess.Popen[str]

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1].split("/")[0])


@contextlib.contextmanager
def serving_http(
    ws: Path, home: Path, *options: str, stop: signal.Signals = signal.SIGTERM, **env: str
) -> Iterator[Http]:
    """`cairn mcp --http` on a free loopback port until the block ends, then stopped: it must
    exit 0, and the token must be in no line it wrote to stderr."""
    server = subprocess.Popen(
        [str(CAIRN), "mcp", "--http", "--port", "0", "--workspace", str(ws), *options],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cairn_env(home, **{"CAIRN_EMBEDDER": "hash", **env}),
        text=True,
    )
    found = None
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        found = re.fullmatch(
            r"Cairn's memory is served over MCP at (http://127\.0\.0\.1:\d+/mcp) \(ctrl\+c stops "
            r"it\); send the header 'Authorization: Bearer ([\w-]+)'\n",
            line,
        )
        assert found is not None, (line, server.stderr.read() if server.poll() else "")
        yield Http(found[1], found[2], server)
    finally:
        server.send_signal(stop)
        code = server.wait(timeout=STOP_BOUND_S)
    assert server.stderr is not None
    err = server.stderr.read()
    assert code == 0, err
    assert found is not None and found[2] not in err

"""`cairn mcp --http` with real HTTP clients: the SDK's own, and plain requests as an attacker
sends them (no token, a wrong one, another site's Origin, a rebinding Host, a huge body)."""

from __future__ import annotations

import asyncio
import signal
import subprocess
from pathlib import Path

import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import Implementation

from tests.e2e.mcp_helpers import (
    NOTE,
    STOP_BOUND_S,
    Http,
    git,
    head,
    payload,
    seeded,
    serving_http,
)
from tests.e2e.test_cli import CAIRN, cairn_env

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
ACCEPT = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


async def post(served: Http, body: object = INITIALIZE, **headers: str) -> httpx.Response:
    async with httpx.AsyncClient() as client:
        return await client.post(served.url, json=body, headers={**ACCEPT, **headers})


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
async def test_the_sdk_client_with_the_token_reads_and_writes_as_itself(
    tmp_path: Path, stop: signal.Signals
) -> None:
    ws = seeded(tmp_path)
    with serving_http(ws, tmp_path, stop=stop) as served:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {served.token}"})
        info = Implementation(name="claude-code", version="2.0")
        async with (
            http,
            Client(
                streamable_http_client(served.url, http_client=http), client_info=info
            ) as client,
        ):
            assert len((await client.list_tools()).tools) == 8
            done = payload(await client.call_tool("memory_append", {"text": "- over HTTP"}))
            found = payload(await client.call_tool("memory_search", {"query": "over HTTP"}))
    assert done["commit"] == head(ws)
    assert git(ws, "log", "-1", "--format=%b").strip() == "mcp client claude-code 2.0 over http"
    assert found["results"][0]["citation"].startswith(f"{NOTE}#L1")


async def test_three_sessions_of_one_server_appending_at_once_lose_nothing(tmp_path: Path) -> None:
    ws = seeded(tmp_path)
    before = head(ws)
    with serving_http(ws, tmp_path) as served:

        async def appends(number: int) -> list[str]:
            http = create_mcp_http_client(headers={"Authorization": f"Bearer {served.token}"})
            info = Implementation(name=f"web-{number}", version="1")
            transport = streamable_http_client(served.url, http_client=http)
            async with http, Client(transport, client_info=info) as client:
                return [
                    payload(await client.call_tool("memory_append", {"text": f"- {number}.{i}"}))[
                        "commit"
                    ]
                    for i in range(6)
                ]

        made = await asyncio.gather(*(appends(n) for n in range(3)))
    lines = (ws / NOTE).read_text().splitlines()
    assert sorted(lines) == sorted(f"- {n}.{i}" for n in range(3) for i in range(6))
    listed = git(ws, "rev-list", f"{before}..HEAD").split()
    assert sorted(listed) == sorted(sha for shas in made for sha in shas)
    for number in range(3):
        named = git(ws, "log", f"{before}..HEAD", f"--grep=mcp client web-{number} ", "--format=%H")
        assert sorted(named.split()) == sorted(made[number])


async def test_a_request_without_the_right_token_gets_401_and_changes_nothing(
    tmp_path: Path,
) -> None:
    ws = seeded(tmp_path)
    before = head(ws)
    with serving_http(ws, tmp_path) as served:
        for headers in (
            {},
            {"Authorization": "Bearer " + "A" * 43},
            {"Authorization": f"Basic {served.token}"},
            {"Authorization": served.token},
            {"Authorization": f"Bearer {served.token}x"},
            {"Authorization": f"Bearer {served.token[:-1]}"},
        ):
            response = await post(served, **headers)
            assert response.status_code == 401, headers
            assert response.headers["www-authenticate"].startswith("Bearer")
        async with httpx.AsyncClient() as client:  # a repeated header is no header
            twice = [("Authorization", "Bearer wrong"), ("Authorization", f"Bearer {served.token}")]
            response = await client.post(
                served.url, json=INITIALIZE, headers=[*ACCEPT.items(), *twice]
            )
            assert response.status_code == 401
    assert head(ws) == before


async def test_a_foreign_origin_or_host_is_refused_even_with_the_token(tmp_path: Path) -> None:
    ws = seeded(tmp_path)
    with serving_http(ws, tmp_path) as served:
        bearer = {"Authorization": f"Bearer {served.token}"}
        for origin in ("http://evil.example", "http://localhost:3000", "null"):
            response = await post(served, **bearer, Origin=origin)
            assert response.status_code == 403, origin
        rebound = await post(served, **bearer, Host=f"evil.example:{served.port}")
        assert rebound.status_code == 421
        other_port = await post(served, **bearer, Host="127.0.0.1:1")
        assert other_port.status_code == 421
        own = await post(served, **bearer, Origin=f"http://127.0.0.1:{served.port}")
        assert own.status_code == 200


async def test_a_body_over_4_mib_is_refused(tmp_path: Path) -> None:
    ws = seeded(tmp_path)
    with serving_http(ws, tmp_path) as served:
        huge = {**INITIALIZE, "padding": "z" * (5 * 1024 * 1024)}
        response = await post(served, huge, Authorization=f"Bearer {served.token}")
        assert response.status_code == 413


def test_only_loopback_is_served_and_a_bad_token_is_refused(tmp_path: Path) -> None:
    ws = seeded(tmp_path)
    for options, env, said in (
        (["--host", "0.0.0.0"], {}, "loopback address only"),
        (["--token", "short"], {}, "--token must be at least 16"),
        ([], {"CAIRN_MCP_TOKEN": "has spaces in it, 16+"}, "CAIRN_MCP_TOKEN must be"),
    ):
        done = subprocess.run(
            [str(CAIRN), "mcp", "--http", "--port", "0", "--workspace", str(ws), *options],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=cairn_env(tmp_path, **env),
            timeout=STOP_BOUND_S,
        )
        assert (done.returncode, done.stdout) == (2, ""), done.stderr
        assert said in done.stderr


async def test_the_token_may_come_from_the_environment(tmp_path: Path) -> None:
    ws = seeded(tmp_path)
    token = "t" * 24
    with serving_http(ws, tmp_path, CAIRN_MCP_TOKEN=token) as served:
        assert served.token == token
        response = await post(served, Authorization=f"Bearer {token}")
        assert response.status_code == 200

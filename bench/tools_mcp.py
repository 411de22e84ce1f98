"""An MCP tool call's overhead: the same `get_current_time` call on mcp-server-time (the
PyPI reference server), straight through the SDK's `ClientSession` and through the Cairn
tool the hub made of it. Target: ≤ 20 ms p50 overhead.

    .venv/bin/python -m bench.tools_mcp
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from shell.config import McpServerSettings
from shell.tools.mcp import McpHub

TARGET_OVERHEAD_MS = 20.0
ARGUMENTS = {"timezone": "UTC"}


def _time_server() -> str:
    return str(Path(sys.executable).parent / "mcp-server-time")


async def _direct_p50(rounds: int) -> float:
    """p50 ms of the call on a session of our own, with the SDK alone."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    with tempfile.TemporaryFile("w+") as errlog:
        parameters = StdioServerParameters(command=_time_server())
        async with (
            stdio_client(parameters, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await session.list_tools()
            await session.call_tool("get_current_time", ARGUMENTS)  # warm-up
            samples = []
            for _ in range(rounds):
                started = time.perf_counter()
                await session.call_tool("get_current_time", ARGUMENTS, read_timeout_seconds=60)
                samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


async def _cairn_p50(rounds: int) -> float:
    """p50 ms of the call through the hub's tool (validation, approval, run, result)."""
    with tempfile.TemporaryDirectory() as logs:
        hub = McpHub([McpServerSettings("time", command=_time_server())], log_dir=Path(logs))
        try:
            [event] = await hub.start()
            if event.server.state != "ready":
                raise RuntimeError(f"mcp-server-time did not start: {event.server.detail}")
            tool = next(t for t in hub.tools() if t.name == "time__get_current_time")
            await tool.call(dict(ARGUMENTS))  # warm-up
            samples = []
            for _ in range(rounds):
                started = time.perf_counter()
                result = await tool.call(dict(ARGUMENTS))
                samples.append((time.perf_counter() - started) * 1000)
                if result.error:
                    raise RuntimeError(result.error)
        finally:
            await hub.aclose()
    return statistics.median(samples)


async def mcp_overhead(rounds: int = 50) -> dict[str, float]:
    """p50 ms of `get_current_time` directly with the SDK and through Cairn, and the
    difference (keys direct_p50_ms, cairn_p50_ms, overhead_p50_ms)."""
    direct = await _direct_p50(rounds)
    cairn = await _cairn_p50(rounds)
    return {
        "direct_p50_ms": round(direct, 2),
        "cairn_p50_ms": round(cairn, 2),
        "overhead_p50_ms": round(cairn - direct, 2),
    }


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    figures = asyncio.run(mcp_overhead(rounds))
    print(f"MCP tool call, mcp-server-time get_current_time ({rounds} calls each, p50)")
    print(f"  {'SDK ClientSession directly':30s} {figures['direct_p50_ms']:8.2f} ms")
    print(f"  {'Cairn tool (McpHub)':30s} {figures['cairn_p50_ms']:8.2f} ms")
    overhead = figures["overhead_p50_ms"]
    verdict = "ok" if overhead <= TARGET_OVERHEAD_MS else "MISSED"
    print(f"  [{verdict}] overhead {overhead:.2f} ms (target <= {TARGET_OVERHEAD_MS:g} ms)")


if __name__ == "__main__":
    main()

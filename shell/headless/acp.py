"""`cairn acp`: Cairn as an agent an ACP client drives (Toad, Zed), on stdio (`shell.acp`).

    cairn acp [--workspace D] [--demo | --model M] [--yes] [--allow RULE]

stdout carries the protocol alone: whatever else would print there (a library's stray line) goes
to stderr instead. The client's `cwd` is each session's project folder. Exit code 0 when the
client hangs up, or on SIGTERM, once every session is saved and its writes pushed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from typing import TYPE_CHECKING, cast

from shell.config import Settings
from shell.headless.options import Subcommands, add_approval_options, add_model, add_workspace
from shell.headless.output import Out

if TYPE_CHECKING:
    from acp import Agent

MAX_MESSAGE = 50 * 1024 * 1024
"""The longest protocol line read (a prompt with files embedded): the SDK's own default."""


def add_parser(sub: Subcommands) -> None:
    acp = sub.add_parser(
        "acp",
        help="Cairn as an ACP agent on stdio, for Toad or Zed",
        description="Speak the Agent Client Protocol on stdin and stdout: the client sends "
        "prompts and answers the approvals; Cairn runs its turns (memory, flush, compaction, "
        "project tools) in the client's folder.",
    )
    add_workspace(acp, inherit=True)
    add_model(acp, inherit=True)
    add_approval_options(acp, inherit=True)


def run_acp(settings: Settings, args: argparse.Namespace, out: Out) -> int:
    protocol = os.dup(sys.stdout.fileno())
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # a stray print must not break the protocol
    asyncio.run(serve_acp(settings, protocol))
    return 0


async def serve_acp(settings: Settings, protocol_fd: int) -> None:
    """Serve one client on stdin and the descriptor `protocol_fd` (stdout's) until it hangs up
    or SIGTERM."""
    from acp import run_agent

    from shell.acp.agent import CairnAcp

    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    with contextlib.suppress(NotImplementedError):
        loop.add_signal_handler(signal.SIGTERM, task.cancel)
    reader = asyncio.StreamReader(limit=MAX_MESSAGE)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    pipe = os.fdopen(protocol_fd, "wb", buffering=0)
    transport, flow = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, pipe)
    writer = asyncio.StreamWriter(transport, flow, None, loop)
    agent = CairnAcp(settings)
    try:
        # the SDK answers "method not found" for what CairnAcp does not offer (load, modes…)
        await run_agent(cast("Agent", agent), input_stream=writer, output_stream=reader)
    except asyncio.CancelledError:
        print("cairn acp: stopped (SIGTERM)", file=sys.stderr, flush=True)
    finally:
        await agent.aclose()

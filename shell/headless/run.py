"""`cairn run`: one turn per message, one JSON event per line.

    cairn run [MESSAGE ...] [--flush] [--compact [FOCUS]]   the messages, else stdin's lines

Exit code 1 when any event was an error.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import Iterable
from pathlib import Path

from shell.config import Settings
from shell.events import Error, Event
from shell.headless.options import Subcommands, add_agent_options
from shell.headless.output import Out, Printable
from shell.secrets.door import event_line
from shell.session.encodable import escaped_json
from shell.session.trace import TraceWriter


class EventSink:
    """Writes each event as one JSON line to stdout and, optionally, to a trace file: redacted
    both (`shell.secrets.door.event_line`), so a token in a prompt or a search is not printed
    for a log to keep."""

    def __init__(self, out: Out, trace: Path | None = None) -> None:
        self.out = out
        self.trace = TraceWriter(trace) if trace else None
        self.errors = 0

    def __call__(self, event: Event) -> None:
        line = escaped_json(event_line(event))  # a lone surrogate must not end the run
        self.out.write(line + "\n")
        self.out.flush()
        if self.trace:
            self.trace.write(event)
        if isinstance(event, Error):
            self.errors += 1

    def close(self) -> None:
        if self.trace:
            self.trace.close()


async def run_headless(
    settings: Settings,
    inputs: Iterable[str],
    *,
    session_id: str | None = None,
    resume: bool = False,
    trace: Path | None = None,
    out: Out | None = None,
) -> int:
    """Run each input (a prompt or a slash command) as one submit. Exit code 1 if any error."""
    from shell.build import build_agent

    sink = EventSink(out or Printable(sys.stdout), trace)
    agent = build_agent(
        settings,
        session_id=session_id,
        resume=resume,
        index_in_background=False,
        interactive=False,
    )
    try:
        async for event in agent.start():
            sink(event)
        for text in inputs:
            if not text.strip():
                continue
            async with contextlib.aclosing(agent.submit(text)) as events:
                async for event in events:
                    sink(event)
            for event in agent.pending_events():  # the background pull, as far as it got
                sink(event)
    finally:
        await agent.aclose()
        for event in agent.pending_events():
            sink(event)
        sink.close()
    return 1 if sink.errors else 0


def add_parser(sub: Subcommands) -> None:
    run = sub.add_parser("run", help="headless: one turn per message, one JSON event per line")
    add_agent_options(run, inherit=True)
    run.add_argument("--flush", action="store_true", help="run a memory flush after the messages")
    run.add_argument(
        "--compact",
        nargs="?",
        const="",
        metavar="FOCUS",
        help="compact after the messages; FOCUS: what the summary should keep above all",
    )
    run.add_argument(
        "messages", nargs="*", help="messages (or slash commands); stdin lines if none"
    )


def run_command(settings: Settings, args: argparse.Namespace, out: Out) -> int:
    return asyncio.run(
        run_headless(
            settings,
            _inputs(args),
            session_id=args.session,
            resume=args.resume,
            trace=args.trace,
            out=out,
        )
    )


def _inputs(args: argparse.Namespace) -> list[str]:
    inputs = list(args.messages) if args.messages else [line.rstrip("\n") for line in sys.stdin]
    if args.flush:
        inputs.append("/flush")
    if args.compact is not None:
        inputs.append(f"/compact {args.compact}".strip())
    return inputs

"""Headless runs: one turn per message, one JSON event per line. Also the search and index
commands, which need no model at all."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from shell.config import Settings
from shell.events import Error, Event, to_json


class EventSink:
    """Writes each event as one JSON line to stdout and, optionally, to a trace file."""

    def __init__(self, out: TextIO, trace: Path | None = None) -> None:
        self.out = out
        self.trace = trace.open("a", encoding="utf-8") if trace else None
        self.errors = 0

    def __call__(self, event: Event) -> None:
        line = to_json(event)
        self.out.write(line + "\n")
        self.out.flush()
        if self.trace:
            self.trace.write(line + "\n")
            self.trace.flush()
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
    out: TextIO | None = None,
) -> int:
    """Run each input (a prompt or a slash command) as one submit. Exit code 1 if any error."""
    from shell.build import build_agent

    sink = EventSink(out or sys.stdout, trace)
    agent = build_agent(settings, session_id=session_id, resume=resume, index_in_background=False)
    try:
        async for event in agent.start():
            sink(event)
        for text in inputs:
            if not text.strip():
                continue
            async with contextlib.aclosing(agent.submit(text)) as events:
                async for event in events:
                    sink(event)
    finally:
        await agent.aclose()
        for event in agent.recall.drain():
            sink(event)
        sink.close()
    return 1 if sink.errors else 0


def search_command(settings: Settings, query: str, *, k: int, as_json: bool, out: TextIO) -> int:
    from shell.memory.service import RecallService
    from shell.workspace import init_workspace

    init_workspace(settings)
    service = RecallService(settings)
    service.sync("manual")
    result = service.searcher.search(query, max_results=k)
    service.index.close()
    if as_json:
        out.write(json.dumps(result.to_model_json(), ensure_ascii=False, indent=2) + "\n")
        return 0
    out.write(f"{result.mode} search for {query!r}")
    out.write(f" (degraded: {result.degraded_reason})\n" if result.degraded_reason else "\n")
    if frame := result.time_frame:
        out.write(f"time named: {frame.text!r}, {frame.start} to {frame.end} (ranked first)\n")
    if result.nothing_relevant or not result.hits:
        out.write("Memory holds nothing relevant to this query.\n")
        return 0
    for hit in result.hits:
        snippet = " ".join(hit.snippet.split())[:160]
        out.write(
            f"{hit.score:.3f}  {hit.citation}  "
            f"(vector {hit.vector_score:.2f}, text {hit.text_score:.2f})\n"
            f"       {snippet}\n"
        )
    return 0


def index_command(settings: Settings, *, action: str, out: TextIO) -> int:
    """`cairn index`: "status" reports, "sync" catches up with the files, "rebuild" starts over.
    Events (sync, rebuild) go out as JSON lines, then the index status."""
    from shell.memory.service import RecallService
    from shell.workspace import init_workspace

    init_workspace(settings)
    service = RecallService(settings)
    match action:
        case "sync":
            events = service.sync("manual")
        case "rebuild":
            events = service.index.rebuild("manual")
        case _:
            events = []
    for event in events:
        out.write(to_json(event) + "\n")
    status = service.index.status()
    service.index.close()
    out.write(json.dumps(status, default=str, indent=2) + "\n")
    return 1 if any(isinstance(e, Error) for e in events) else 0

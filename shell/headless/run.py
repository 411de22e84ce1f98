"""Headless runs: one turn per message, one JSON event per line. Also the search and index
commands, which need no model at all, and `cairn dream`."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from shell.config import DEMO_CONTEXT_WINDOW, Settings
from shell.events import (
    DeepSleepFinished,
    DreamSweepFinished,
    DreamSweepSkipped,
    DreamSweepStarted,
    Error,
    Event,
    LightSleepFinished,
    MemoryWritten,
    ModelRetry,
    ProposalAccepted,
    ProposalRejected,
    RemSleepFinished,
    to_json,
)
from shell.secrets.detect import redacted_json
from shell.text import counted, short_sha

if TYPE_CHECKING:
    from shell.dreaming import Decision, Dreamer, Preview


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
        if self.trace:  # on disk: nothing detected as a secret (shell.secrets.detect)
            self.trace.write(redacted_json(event) + "\n")
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


async def dream_command(
    settings: Settings,
    decisions: Sequence[Decision],
    *,
    apply_all: bool = False,
    over_budget: bool = False,
    as_json: bool = False,
    out: TextIO,
) -> int:
    """`cairn dream`: with no decision, a sweep and the open proposals; else the decisions,
    in order (`apply_all` accepts every open proposal). Exit code 1 if anything failed."""
    from shell.build import build_dreamer
    from shell.dreaming import Decision

    dreamer = build_dreamer(settings)
    window = _window(settings, dreamer)
    failed = False

    def emit(event: Event) -> None:
        nonlocal failed
        failed |= isinstance(event, Error) or (
            isinstance(event, DreamSweepSkipped) and event.reason != "disabled"
        )
        if as_json:
            out.write(to_json(event) + "\n")
        elif line := dream_line(event):
            out.write(line + "\n")

    try:
        if apply_all:
            previews = await asyncio.to_thread(dreamer.open_proposals, window=window)
            decisions = [
                *decisions,
                *(Decision("accept", p.proposal.id, over_budget=over_budget) for p in previews),
            ]
        if not decisions:
            async with contextlib.aclosing(dreamer.sweep("cli", window=window)) as events:
                async for event in events:
                    emit(event)
        for decision in decisions:
            for event in await asyncio.to_thread(dreamer.decide, decision, window=window):
                emit(event)
        if not as_json:
            previews = await asyncio.to_thread(dreamer.open_proposals, window=window)
            out.write(review_listing(previews))
    finally:
        await asyncio.to_thread(dreamer.recall.index.close)
    return 1 if failed else 0


def _window(settings: Settings, dreamer: Dreamer) -> int:
    """The window `cairn run` would resolve: configured, the demo's, the model's, or assumed."""
    from shell.context.budget import UNKNOWN_WINDOW

    if settings.context_window:
        return settings.context_window
    if settings.demo or dreamer.llm is None:
        return DEMO_CONTEXT_WINDOW
    return dreamer.llm.context_window()[0] or UNKNOWN_WINDOW


def dream_line(event: Event) -> str | None:
    """One line of `cairn dream`'s report for an event (None for those the listing covers)."""
    match event:
        case DreamSweepStarted(sweep_id=sweep_id):
            return f"dreaming ({sweep_id})"
        case LightSleepFinished():
            return (
                f"  light  {event.since} to {event.until}: {counted(event.notes, 'note')}, "
                f"{counted(event.units, 'fact')}, {event.merged} merged, "
                f"{len(event.reinforced)} reinforced"
            )
        case RemSleepFinished():
            themes = ", ".join(f"{t.word} ({counted(t.days, 'day')})" for t in event.themes)
            return (
                f"  REM    {event.since} to {event.until}: {counted(event.notes, 'note')}; "
                f"themes: {themes or 'none yet'}; {counted(len(event.truths), 'candidate truth')}"
            )
        case DeepSleepFinished():
            from shell.dreaming.diary import stops_text

            stopped = f"; stopped: {stops_text(event.stopped)}" if event.stopped else ""
            return f"  deep   {event.ranked} ranked, {event.passed} passed the gates{stopped}"
        case MemoryWritten(path=path, commit=commit):
            return f"  {path} written → {short_sha(commit) if commit else 'not committed'}"
        case DreamSweepFinished(diary=diary, open=open_count):
            return f"  {diary}\n{counted(open_count, 'proposal')} open"
        case DreamSweepSkipped(detail=detail):
            return f"dreaming skipped: {detail}"
        case ProposalAccepted(proposal=proposal, text=text, commit=commit):
            return f"accepted {proposal.id} into MEMORY.md ({short_sha(commit) or '?'}): {text}"
        case ProposalRejected(proposal=proposal):
            return f"rejected {proposal.id}; it will not be proposed again: {proposal.text}"
        case Error(message=message):
            return f"error: {message}"
        case ModelRetry(reason=reason):
            return f"  model: retrying ({reason})"
    return None


def review_listing(previews: Sequence[Preview]) -> str:
    """The open proposals as `cairn dream` lists them, with how to decide."""
    if not previews:
        return ""
    lines = [""]
    for preview in previews:
        proposal = preview.proposal
        by = "the model" if proposal.distilled_by == "model" else "rule"
        if proposal.fallback:
            by += f" ({proposal.fallback})"
        sources = ", ".join(
            s.citation + (f" ({s.date})" if s.date else "") for s in proposal.sources
        )
        lines += [
            f"{proposal.id}  {proposal.kind}  {proposal.text}",
            f"    why: {proposal.reason}; distilled by {by}",
            f"    from: {sources}",
            *(f"    {line}" for line in preview.diff),
        ]
        if preview.stale:
            lines.append(f"    stale: {preview.stale}")
        elif preview.budget.over:
            lines.append(
                f"    over budget: MEMORY.md would be {preview.budget.chars:,} characters, "
                f"its share of the prompt is {preview.budget.budget:,} (--over-budget to accept)"
            )
    lines += ["", "decide with: cairn dream --apply ID | --edit ID TEXT | --reject ID"]
    return "\n".join(lines) + "\n"

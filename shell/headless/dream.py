"""`cairn dream`: a dreaming sweep from the shell, or decisions on what it proposed.

    cairn dream [--apply ID… | --apply-all] [--reject ID…] [--edit ID TEXT] [--json]
                [--scope global|project|all] [--project DIR]

Nothing enters MEMORY.md but what is decided here or in the TUI's review. Each memory dreams
alone (`shell.scopes`): a sweep of a project's reads and proposes into that project's
MEMORY.md only; decisions name one memory. A project's memory has its citations of files
checked against its project folder (a stale one is proposed re-cited); the global memory's
only against a folder `--project` names.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from shell.config import ConfigError, Settings
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
    Notice,
    ProposalAccepted,
    ProposalRejected,
    RemSleepFinished,
)
from shell.headless.options import Subcommands, add_model, add_workspace
from shell.headless.output import Out
from shell.headless.scoped import add_scope_options, chosen_scopes, scoped_settings
from shell.scopes.scopes import scope_settings
from shell.secrets.door import event_line
from shell.text import counted, short_sha
from shell.workspace import PROJECT_SEEDS, SEEDS

if TYPE_CHECKING:
    from shell.dreaming import Decision, Dreamer, Preview


def add_parser(sub: Subcommands) -> None:
    dream = sub.add_parser(
        "dream",
        help="run a dreaming sweep and list its proposals, or decide on them",
        description="With no decision, run a sweep: what keeps being recalled becomes proposals "
        "for MEMORY.md. With decisions, apply them in order; nothing enters MEMORY.md otherwise.",
    )
    add_workspace(dream, inherit=True)
    add_model(dream, inherit=True)
    dream.add_argument(
        "--apply",
        nargs="+",
        action="extend",
        default=[],
        metavar="ID",
        help="accept these proposals (ids as listed)",
    )
    dream.add_argument("--apply-all", action="store_true", help="accept every open proposal")
    dream.add_argument(
        "--reject",
        nargs="+",
        action="extend",
        default=[],
        metavar="ID",
        help="reject these proposals",
    )
    dream.add_argument(
        "--edit",
        nargs=2,
        action="append",
        default=[],
        metavar=("ID", "TEXT"),
        help="accept a proposal with your own wording",
    )
    dream.add_argument(
        "--over-budget",
        action="store_true",
        help="accept even when MEMORY.md would outgrow its share of the prompt",
    )
    dream.add_argument("--json", action="store_true", help="one JSON event per line")
    add_scope_options(dream)


def run_dream(settings: Settings, args: argparse.Namespace, out: Out) -> int:
    """`cairn dream` as parsed: the decisions go in the order `--apply`, `--edit`, `--reject`."""
    from shell.dreaming import Decision

    explicit = getattr(args, "project", None) is not None
    over_budget = args.over_budget
    decisions = [
        *(Decision("accept", i, over_budget=over_budget) for i in args.apply),
        *(Decision("accept", i, text, over_budget=over_budget) for i, text in args.edit),
        *(Decision("reject", i) for i in args.reject),
    ]
    settings = scoped_settings(settings, args)
    _, chosen = chosen_scopes(settings, args.scope, shared=False)
    if (decisions or args.apply_all) and len(chosen) > 1:
        raise ConfigError("a decision is on one memory: add --scope global or --scope project")
    failed = 0
    for named in chosen:
        if len(chosen) > 1 or named.kind == "project":
            said = Notice(f"dreaming the {named.label} memory ({named.workspace})")
            out.write((event_line(said) if args.json else f"== {said.message}") + "\n")
        here = scope_settings(settings, named)
        if named.kind == "global" and not explicit:  # which project the global one cites: none
            here = replace(here, project=None)
        failed |= asyncio.run(
            dream_command(
                here,
                decisions,
                apply_all=args.apply_all,
                over_budget=over_budget,
                as_json=args.json,
                out=out,
                seeds=PROJECT_SEEDS if named.kind == "project" else SEEDS,
                scope=named.label,
            )
        )
    return failed


async def dream_command(
    settings: Settings,
    decisions: Sequence[Decision],
    *,
    apply_all: bool = False,
    over_budget: bool = False,
    as_json: bool = False,
    out: Out,
    seeds: dict[str, str] = SEEDS,
    scope: str = "global",
) -> int:
    """`cairn dream` on the memory of `settings.workspace`: with no decision, a sweep and the
    open proposals; else the decisions, in order (`apply_all` accepts every open proposal).
    `seeds`: what that workspace is seeded with (a project's has no AGENTS.md or SOUL.md);
    `scope`: its label, on the events of what it writes.
    Exit code 1 if anything failed."""
    from shell.build import build_dreamer
    from shell.dreaming import Decision
    from shell.recovery import recover_interrupted

    dreamer = build_dreamer(settings, seeds, scope)
    window = _window(settings, dreamer)
    failed = False

    def emit(event: Event) -> None:
        nonlocal failed
        failed |= isinstance(event, Error) or (
            isinstance(event, DreamSweepSkipped) and event.reason != "disabled"
        )
        if as_json:
            out.write(event_line(event) + "\n")
        elif line := dream_line(event):
            out.write(line + "\n")

    try:
        for event in await asyncio.to_thread(recover_interrupted, settings.workspace, dreamer.git):
            emit(event)  # a decision a kill cut short is finished or undone first
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
    from shell.context.budget import configured_window

    window = configured_window(settings)
    if not window.resolved and dreamer.llm is not None:
        window.look_up(dreamer.llm.context_window, settings.model)
    return window.budget.window


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
            *(f"    written: {o.citation} {o.summary}" for o in proposal.origins),
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

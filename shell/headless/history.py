"""`cairn history` and `cairn revert`: the memory's commits, headless.

    cairn history [--json] [-n N] [--scope S]   each memory's commits, newest first
    cairn revert SHA [--yes] [--json] undo one commit as a new commit, after its preview

Without `--yes`, a revert asks y/N on a terminal; with no terminal it changes nothing and exits 1.
The revert itself runs through the agent (`Agent.revert`), as `cairn run` builds it: its events
are printed (one JSON line each with `--json`) and kept in the latest session's view log, and
the new commit is pushed before the command exits when the workspace has a remote.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from collections.abc import Callable

from shell.config import Settings
from shell.events import Event, MemoryWritten, Notice
from shell.git.history import MemoryHistory
from shell.git.runner import GitFailure
from shell.git.store import GitStore
from shell.headless.output import Out
from shell.headless.scoped import add_scope_options, chosen_scopes
from shell.scopes.scopes import scope_settings
from shell.secrets.door import event_line
from shell.sync.describe import sync_line
from shell.text import short_sha


def add_parsers(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    common: Callable[..., None],
) -> None:
    """Register `history` and `revert` on the `cairn` parser's subcommands."""
    history = sub.add_parser("history", help="the memory's commits, newest first")
    common(history, inherit=True)
    history.add_argument("--json", action="store_true", help="one JSON object per line")
    history.add_argument("-n", type=int, default=30, help="how many commits (default 30)")
    add_scope_options(history)
    revert = sub.add_parser("revert", help="undo one memory commit as a new commit")
    common(revert, inherit=True)
    revert.add_argument("sha", help="the commit to revert")
    revert.add_argument("--yes", action="store_true", help="revert without asking")
    revert.add_argument("--json", action="store_true", help="the events as JSON lines")


def _history(settings: Settings) -> MemoryHistory:
    return MemoryHistory(
        GitStore(
            settings.workspace,
            author_name=settings.git_author_name,
            author_email=settings.git_author_email,
        )
    )


def history_command(
    settings: Settings, *, limit: int, as_json: bool, out: Out, scope: str = "all"
) -> int:
    """The commits of each memory `scope` names (`shell.headless.scoped`), newest first; each
    JSON line says its scope, and the text names each memory when a project's is among them."""
    _, chosen = chosen_scopes(settings, scope, shared=False)
    for named in chosen:
        if not as_json and (len(chosen) > 1 or named.kind == "project"):
            out.write(f"== {named.label} memory: {named.workspace}\n")
        _scope_history(scope_settings(settings, named), named.label, limit, as_json, out)
    return 0


def _scope_history(settings: Settings, label: str, limit: int, as_json: bool, out: Out) -> None:
    commits = _history(settings).commits(max(1, limit))
    for commit in commits:
        if as_json:
            out.write(json.dumps({**commit.as_json(), "scope": label}) + "\n")
            continue
        where = f"s:{commit.session[:8]} t:{commit.turn}" if commit.session else ""
        where = f"mcp:{commit.client}"[:16] if commit.client else where
        out.write(
            f"{commit.short}  {commit.when:%Y-%m-%d %H:%M}  {commit.kind:<12} {where:<16}"
            f" {commit.subject}  [{', '.join(commit.files)}]\n"
        )
    if not commits and not as_json:
        out.write(f"no commits in {settings.workspace}\n")


def revert_command(
    settings: Settings,
    sha: str,
    *,
    yes: bool,
    out: Out,
    as_json: bool = False,
    ask: Callable[[str], str] = input,
    interactive: bool | None = None,
) -> int:
    """Preview the revert of `sha`, ask (unless `yes`), then revert it through the agent."""
    from shell.recovery import recover_interrupted

    history = _history(settings)
    for event in recover_interrupted(settings.workspace, history.store):  # a kill's half state
        if line := event_line(event) if as_json else revert_line(event):
            out.write(line + "\n")
    try:
        preview = history.preview_revert(sha)
    except GitFailure as failure:
        out.write(f"cairn revert: {failure.message}\n")
        return 1
    if not as_json:
        out.write(f"Reverting {short_sha(preview.sha)} will change:\n{preview.diff.rstrip()}\n")
    if not preview.applies:
        out.write(f"cairn revert: refused, {preview.reason}\n")
        return 1
    if not yes:
        if not (sys.stdin.isatty() if interactive is None else interactive):
            out.write("cairn revert: no terminal to confirm on; nothing changed (pass --yes)\n")
            return 1
        if ask("Revert this commit? [y/N] ").strip().lower() not in {"y", "yes"}:
            out.write("nothing changed\n")
            return 1
    events = asyncio.run(_revert(settings, preview.sha))
    for event in events:
        if as_json:
            out.write(event_line(event) + "\n")
        elif line := revert_line(event):
            out.write(line + "\n")
    written = [event for event in events if isinstance(event, MemoryWritten)]
    if written and not as_json:
        files = ", ".join(event.path for event in written)
        out.write(
            f"reverted {short_sha(preview.sha)} as {short_sha(written[0].commit)} ({files})\n"
        )
    return 0 if written else 1


async def _revert(settings: Settings, sha: str) -> list[Event]:
    """The agent's revert, then what closing it brought (the push the new commit owes). It is
    kept in the latest session's view, so `--resume` shows it after that session's turns."""
    from shell.build import build_agent

    agent = build_agent(settings, resume=True, index_in_background=False, interactive=False)
    events: list[Event] = []
    try:
        async with contextlib.aclosing(agent.revert(sha)) as stream:
            events += [event async for event in stream]
    finally:
        await agent.aclose()
        events += [*agent.recall.drain(), *agent.sync.drain()]
    return events


def revert_line(event: Event) -> str | None:
    """One line of `cairn revert`'s report for an event."""
    match event:
        case MemoryWritten(path=path, commit=commit, lines_added=added):
            return f"  {path} written → {short_sha(commit)} (revert, +{added} lines)"
        case Notice(message=message):
            return f"cairn revert: {message}"
    return sync_line(event)

"""`cairn history` and `cairn revert`: the memory's commits, headless.

    cairn history [--json] [-n N]     the workspace's commits, newest first
    cairn revert SHA [--yes]          undo one commit as a new commit, after its preview

Without `--yes`, a revert asks y/N on a terminal; with no terminal it changes nothing and exits 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import TextIO

from shell.config import Settings
from shell.git.history import MemoryHistory
from shell.git.store import GitStore
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
    revert = sub.add_parser("revert", help="undo one memory commit as a new commit")
    common(revert, inherit=True)
    revert.add_argument("sha", help="the commit to revert")
    revert.add_argument("--yes", action="store_true", help="revert without asking")


def _history(settings: Settings) -> MemoryHistory:
    return MemoryHistory(
        GitStore(
            settings.workspace,
            author_name=settings.git_author_name,
            author_email=settings.git_author_email,
        )
    )


def history_command(settings: Settings, *, limit: int, as_json: bool, out: TextIO) -> int:
    commits = _history(settings).commits(max(1, limit))
    for commit in commits:
        if as_json:
            out.write(json.dumps(commit.as_json()) + "\n")
            continue
        where = f"s:{commit.session[:8]} t:{commit.turn}" if commit.session else ""
        out.write(
            f"{commit.short}  {commit.when:%Y-%m-%d %H:%M}  {commit.kind:<12} {where:<16}"
            f" {commit.subject}  [{', '.join(commit.files)}]\n"
        )
    if not commits and not as_json:
        out.write(f"no commits in {settings.workspace}\n")
    return 0


def revert_command(
    settings: Settings,
    sha: str,
    *,
    yes: bool,
    out: TextIO,
    ask: Callable[[str], str] = input,
    interactive: bool | None = None,
) -> int:
    history = _history(settings)
    try:
        preview = history.preview_revert(sha)
    except Exception as error:
        out.write(f"cairn revert: no such commit {sha}: {error}\n")
        return 1
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
    outcome = history.revert(preview.sha)
    if outcome.sha is None:
        out.write(f"cairn revert: refused, {outcome.error}\n")
        return 1
    out.write(
        f"reverted {short_sha(preview.sha)} as {short_sha(outcome.sha)} "
        f"({', '.join(outcome.files)})\n"
    )
    return 0

"""The headless commands of `cairn`, by family: how each adds its subcommands to the parser,
and what runs each subcommand. The front door (`widgets.cli`) adds the TUI's to them."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from shell.config import Settings
from shell.headless import acp, dream, forget, init, mcp, run, search, sync, tools, why
from shell.headless.options import Subcommands, add_workspace
from shell.headless.output import Out

Runner = Callable[[Settings, argparse.Namespace, Out], int]
"""A subcommand: its settings, its parsed arguments, where it prints; the exit code."""


@dataclass(frozen=True)
class Family:
    """Subcommands added to the parser together, and what runs each of them."""

    add: Callable[[Subcommands], None]
    runs: Mapping[str, Runner]
    runs_agent: bool = False
    """Its commands run an agent: they take the project folder and the approval flags."""


def _add_history(sub: Subcommands) -> None:
    from shell.headless.history import add_parsers  # loads git: only when parsing

    add_parsers(sub, add_workspace)


def _history(settings: Settings, args: argparse.Namespace, out: Out) -> int:
    from shell.headless.history import history_command
    from shell.headless.scoped import scoped_settings

    return history_command(
        scoped_settings(settings, args), limit=args.n, as_json=args.json, out=out, scope=args.scope
    )


def _revert(settings: Settings, args: argparse.Namespace, out: Out) -> int:
    from shell.headless.history import revert_command

    return revert_command(settings, args.sha, yes=args.yes, as_json=args.json, out=out)


def _add_sync(sub: Subcommands) -> None:
    sync.add_parsers(sub, add_workspace)


def _add_forget(sub: Subcommands) -> None:
    forget.add_parser(sub, add_workspace)


HEADLESS: dict[str, Family] = {
    "init": Family(init.add_parser, {"init": init.run_init}),
    "run": Family(run.add_parser, {"run": run.run_command}, runs_agent=True),
    "search": Family(search.add_search_parser, {"search": search.run_search}),
    "index": Family(search.add_index_parser, {"index": search.run_index}),
    "dream": Family(dream.add_parser, {"dream": dream.run_dream}),
    "history": Family(_add_history, {"history": _history, "revert": _revert}),
    "tools": Family(tools.add_parser, {"tools": tools.run_tools_command}, runs_agent=True),
    "sync": Family(_add_sync, {"remote": sync.remote_command, "sync": sync.sync_command}),
    "forget": Family(_add_forget, {"forget": forget.run_forget}),
    "mcp": Family(mcp.add_parser, {"mcp": mcp.run_mcp}),
    "why": Family(why.add_parser, {"why": why.run_why}),
    "acp": Family(acp.add_parser, {"acp": acp.run_acp}, runs_agent=True),
}

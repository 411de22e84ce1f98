"""`cairn init`: seed a workspace, or join a synced memory.

    cairn init [DIR]                    a git repo with the memory files
    cairn init --remote URL [DIR]       a second machine joins: a clone of URL
               [--branch NAME]          the remote's branch to join (default: see shell.sync.clone)

DIR defaults to `--workspace`, `$CAIRN_WORKSPACE` or a platform data dir.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from shell.config import ConfigError, Settings
from shell.headless.options import Subcommands, add_branch, add_workspace
from shell.headless.output import Out


def add_parser(sub: Subcommands) -> None:
    init = sub.add_parser("init", help="seed a workspace")
    init.add_argument(
        "directory",
        nargs="?",
        type=Path,
        help="the folder to seed (default: --workspace, $CAIRN_WORKSPACE or a platform data dir)",
    )
    add_workspace(init, inherit=True)
    init.add_argument("--remote", metavar="URL", help="join a synced memory: clone URL")
    add_branch(init)


def run_init(settings: Settings, args: argparse.Namespace, out: Out) -> int:
    if args.remote:
        from shell.headless.sync import clone_command

        return clone_command(settings, args.remote, out, branch=args.branch)
    if args.branch:
        raise ConfigError("--branch goes with --remote")
    from shell.workspace import init_workspace

    init_workspace(settings)
    out.write(f"Workspace ready at {settings.workspace}\n")
    return 0

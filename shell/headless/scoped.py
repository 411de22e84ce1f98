"""`--scope global|project|all` of the commands that read or keep memory (`cairn search`,
`cairn index`, `cairn history`, `cairn dream`): which memories they work on. The default is
what a session in the project folder (the current folder, or `--project`) sees: its project's
memory, when it has one, and the global memory."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from shell.config import ConfigError, Settings, project_folder
from shell.headless.options import inherited
from shell.scopes.scopes import Scope, Scopes, session_scopes

SCOPE_CHOICES = ("global", "project", "all")


def add_scope_options(parser: argparse.ArgumentParser, *, one: bool = False) -> None:
    """`one`: the command works on one memory's file (`cairn why`, `cairn forget`): global
    (the default) or project, never all."""
    parser.add_argument(
        "--scope",
        choices=SCOPE_CHOICES[:2] if one else SCOPE_CHOICES,
        default="global" if one else "all",
        help="the memory to work on: global (about you, read in every project), project (the "
        + (
            "project folder's own); default global"
            if one
            else "project folder's own), or all of what a session there sees (default)"
        ),
    )
    parser.add_argument(
        "--project",
        help="the project folder whose memory --scope project names (default: the current folder)",
        **inherited(True),
    )


def scoped_settings(settings: Settings, args: argparse.Namespace) -> Settings:
    """`settings` with the project folder the arguments name (the current folder by default)."""
    named = getattr(args, "project", None)
    return replace(settings, project=project_folder(named or Path.cwd()))


def one_memory(settings: Settings, args: argparse.Namespace) -> Path:
    """The workspace of the one memory `--scope` names (global, or the project folder's).

    Raises:
        ConfigError: the project has no memory yet.
    """
    scoped = scoped_settings(settings, args) if args.scope == "project" else settings
    return chosen_scopes(scoped, args.scope)[1][0].workspace


def chosen_scopes(
    settings: Settings, choice: str, *, shared: bool = True
) -> tuple[Scopes, list[Scope]]:
    """The session's scopes in `settings`' project, and those `choice` names that exist (a
    command that reads never makes a memory); `shared`: "all" takes the projects `[scopes]
    share` lets it read (a search does; indexing, history and dreaming keep to its own).

    Raises:
        ConfigError: `choice` is "project" and the project has no memory yet.
    """
    scopes = session_scopes(settings)
    if choice == "global":
        return scopes, [scopes.user]
    if choice == "project":
        project = scopes.project
        if project is None or not project.workspace.is_dir():
            raise ConfigError(
                f"no memory for the project {settings.project} yet: a session there makes it"
            )
        return scopes, [project]
    among = scopes.readable if shared else (scopes.own, scopes.user)
    named = [scope for scope in dict.fromkeys(among) if scope.workspace.is_dir()]
    return scopes, named or [scopes.user]

"""The options several `cairn` commands share, the parser that carries them before any
subcommand, and the settings they resolve to."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeAlias

from shell.config import DEMO_MODEL, Settings, load_settings, project_folder

Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def inherited(inherit: bool) -> dict[str, Any]:
    """With `inherit` (a subcommand's parser), an option left out keeps what was given before
    the subcommand: argparse would otherwise overwrite it with the subcommand's default, and
    `cairn --workspace D init` would seed the default workspace."""
    return {"default": argparse.SUPPRESS} if inherit else {}


def add_workspace(parser: argparse.ArgumentParser, *, inherit: bool = False) -> None:
    """The option every command takes (`inherit`: see `inherited`)."""
    parser.add_argument(
        "--workspace",
        type=Path,
        help="workspace folder (default: $CAIRN_WORKSPACE or a platform data dir)",
        **inherited(inherit),
    )


def add_branch(parser: argparse.ArgumentParser) -> None:
    """`--branch NAME`: the remote's branch the memory lives on, instead of the rule's choice."""
    parser.add_argument(
        "--branch",
        metavar="NAME",
        help="the remote's branch to sync with (default: its HEAD's, else its one branch with "
        "commits)",
    )


def add_model(parser: argparse.ArgumentParser, *, inherit: bool = False) -> None:
    """The options of the commands that call a model: the TUI, run and dream."""
    default = inherited(inherit)
    parser.add_argument(
        "--model",
        help="any litellm model string, e.g. gpt-4o-mini or ollama/llama3.1",
        **default,
    )
    parser.add_argument(
        "--api-base",
        help="base URL of an OpenAI-compatible server (Ollama, llama.cpp, vLLM)",
        **default,
    )
    parser.add_argument(
        "--context-window",
        type=int,
        help="context window in tokens, when the model's is unknown",
        **default,
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help="use the offline demo brain (no API key, no network)",
        **default,
    )


def add_session(parser: argparse.ArgumentParser, *, inherit: bool = False) -> None:
    """The options of the commands that hold a session: the TUI, run and serve."""
    default = inherited(inherit)
    parser.add_argument("--session", help="continue this session id", **default)
    parser.add_argument(
        "--resume", action="store_true", help="continue the most recent session", **default
    )
    parser.add_argument(
        "--trace",
        type=Path,
        help="also write every event as a JSON line to this file",
        **default,
    )


def add_tool_options(parser: argparse.ArgumentParser, *, inherit: bool = False) -> None:
    """`--project`, `--yes` and `--allow`, for the commands that run an agent. The project
    folder is the folder Cairn was started in unless `--project` names another."""
    default = inherited(inherit)
    parser.add_argument(
        "--project",
        type=Path,
        help="the folder the project tools work in (default: the current folder)",
        **default,
    )
    add_approval_options(parser, inherit=inherit)


def add_approval_options(parser: argparse.ArgumentParser, *, inherit: bool = False) -> None:
    """`--yes` and `--allow`: the calls allowed without asking."""
    parser.add_argument(
        "--yes",
        action="store_true",
        help="allow every edit, command and MCP call without asking",
        **inherited(inherit),
    )
    parser.add_argument(
        "--allow",
        action="append",
        metavar="RULE",
        default=argparse.SUPPRESS if inherit else [],
        help="allow calls without asking: a tool, or tool:pattern, e.g. 'run_command:pytest*'",
    )


def add_agent_options(parser: argparse.ArgumentParser, *, inherit: bool = False) -> None:
    """Everything a command that runs an agent takes: the TUI, run and serve."""
    add_workspace(parser, inherit=inherit)
    add_model(parser, inherit=inherit)
    add_session(parser, inherit=inherit)
    add_tool_options(parser, inherit=inherit)


def root_parser() -> argparse.ArgumentParser:
    """`cairn` before any subcommand: the TUI's options, which every subcommand inherits."""
    parser = argparse.ArgumentParser(
        prog="cairn", description="An agent shell whose memory is plain Markdown."
    )
    add_agent_options(parser)
    return parser


def settings_from(args: argparse.Namespace, *, runs_agent: bool) -> Settings:
    """The settings the parsed flags give, over the config file and `CAIRN_*`; with
    `runs_agent`, also the project folder and the approval flags."""
    overrides: dict[str, Any] = {
        "workspace": getattr(args, "directory", None) or args.workspace,
        "model": DEMO_MODEL if args.demo else args.model,
        "api_base": args.api_base,
        "context_window": args.context_window,
    }
    settings = load_settings(overrides)
    return with_tool_options(settings, args) if runs_agent else settings


def with_tool_options(settings: Settings, args: argparse.Namespace) -> Settings:
    """`settings` with the project folder and the flags' approval policy."""
    named = getattr(args, "project", None)
    tools = replace(settings.tools, project="on") if named else settings.tools
    if getattr(args, "yes", False):
        tools = replace(tools, approval="yes")
    if rules := getattr(args, "allow", None):
        tools = replace(tools, allow=(*tools.allow, *rules))
    return replace(settings, project=project_folder(named or Path.cwd()), tools=tools)

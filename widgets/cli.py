"""The `cairn` command line: the front door for the TUI and the headless core.

    cairn [--workspace D] [--demo] [--resume]     open the TUI (on the project in the current
          [--project DIR] [--yes] [--allow RULE]  folder; --yes: no approvals asked)
    cairn init [DIR]                              seed a workspace (git repo, memory files)
    cairn run [MESSAGE ...]                       headless: one turn per message (or stdin line)
    cairn search QUERY [--json] [-k N]            search memory from the shell
    cairn index [--status | --rebuild]            inspect or rebuild the derived index
    cairn dream [--apply ID… | --apply-all] [--reject ID…] [--edit ID TEXT] [--json]
                                                  dream, or decide on what dreaming proposed
    cairn replay TRACE                            play a recorded trace back into the TUI
    cairn serve [--host H] [--port P]             the TUI in a browser, on 127.0.0.1:8000
    cairn tools [--json]                          the tools, their approvals, the MCP servers
    cairn remote add URL | sync | init --remote URL   one memory on every machine
    (shell/headless/sync.py) cairn history [--json] [-n N]                 the memory's commits
    (shell/headless/history.py) cairn revert SHA [--yes]                      undo one memory commit
    as a new commit

Errors print one clear line and exit non-zero; never a traceback. A reader that closes the
pipe early (`cairn run … | head -1`) ends the command quietly with exit code 141.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import sys
from pathlib import Path
from typing import Any

from shell.config import DEMO_MODEL, ConfigError, Settings, load_settings
from shell.headless import sync as cli_sync
from shell.headless import tools as cli_tools
from shell.heavy_import import collector_paused

EXIT_CLOSED_PIPE = 141
"""The exit code when stdout's reader closed the pipe: 128 + SIGPIPE, what a shell reports for
a command SIGPIPE ended (git, coreutils), so a pipeline with `set -o pipefail` can tell a cut
run from a complete one; nothing is printed."""


def _defaults(inherit: bool) -> dict[str, Any]:
    """With `inherit` (a subcommand's parser), an option left out keeps what was given before
    the subcommand: argparse would otherwise overwrite it with the subcommand's default, and
    `cairn --workspace D init` would seed the default workspace."""
    return {"default": argparse.SUPPRESS} if inherit else {}


def _common(parser: argparse.ArgumentParser, *, inherit: bool = False) -> None:
    """The option every command takes (`inherit`: see `_defaults`)."""
    default = _defaults(inherit)
    parser.add_argument(
        "--workspace",
        type=Path,
        help="workspace folder (default: $CAIRN_WORKSPACE or a platform data dir)",
        **default,
    )


def _model(parser: argparse.ArgumentParser, *, inherit: bool = False) -> None:
    """The options of the commands that call a model: the TUI, run and dream."""
    default = _defaults(inherit)
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


def _session(parser: argparse.ArgumentParser, *, inherit: bool = False) -> None:
    default = _defaults(inherit)
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cairn", description="An agent shell whose memory is plain Markdown."
    )
    _common(parser)
    _model(parser)
    _session(parser)
    cli_tools.add_options(parser)
    sub = parser.add_subparsers(dest="command")

    init = sub.add_parser("init", help="seed a workspace")
    init.add_argument(
        "directory",
        nargs="?",
        type=Path,
        help="the folder to seed (default: --workspace, $CAIRN_WORKSPACE or a platform data dir)",
    )
    _common(init, inherit=True)
    init.add_argument("--remote", metavar="URL", help="join a synced memory: clone URL")

    run = sub.add_parser("run", help="headless: one turn per message, one JSON event per line")
    _common(run, inherit=True)
    _model(run, inherit=True)
    _session(run, inherit=True)
    cli_tools.add_options(run, inherit=True)
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

    search = sub.add_parser(
        "search",
        help="search memory",
        description="Search the memory files as the agent's memory_search does, by meaning and "
        "by exact tokens; no model is called.",
    )
    _common(search, inherit=True)
    search.add_argument(
        "query",
        nargs="+",
        help="what to look for: plain words, or exact tokens such as a ticket id or a hash "
        "(several words form one query)",
    )
    search.add_argument(
        "--json",
        action="store_true",
        help="print the result as JSON (mode, hits with path, lines, scores and snippet)",
    )
    search.add_argument(
        "-k", type=int, default=6, metavar="N", help="number of hits, 1 to 50 (default 6)"
    )

    index = sub.add_parser(
        "index",
        help="inspect or rebuild the memory index",
        description="With no option, bring the index up to date with the memory files.",
    )
    _common(index, inherit=True)
    group = index.add_mutually_exclusive_group()
    group.add_argument(
        "--status", action="store_true", help="report what the index holds; change nothing"
    )
    group.add_argument(
        "--rebuild", action="store_true", help="drop the index and build it again from the files"
    )

    dream = sub.add_parser(
        "dream",
        help="run a dreaming sweep and list its proposals, or decide on them",
        description="With no decision, run a sweep: what keeps being recalled becomes proposals "
        "for MEMORY.md. With decisions, apply them in order; nothing enters MEMORY.md otherwise.",
    )
    _common(dream, inherit=True)
    _model(dream, inherit=True)
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

    replay = sub.add_parser("replay", help="play a recorded trace back into the TUI")
    _common(replay, inherit=True)
    replay.add_argument("trace_file", type=Path, help="a trace written by --trace")
    replay.add_argument("--step", action="store_true", help="play one turn per Enter")
    serve = sub.add_parser("serve", help="the TUI in a browser (widgets/serve.py)")
    _common(serve, inherit=True)
    _model(serve, inherit=True)
    _session(serve, inherit=True)
    cli_tools.add_options(serve, inherit=True)
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (warns if wider)")
    serve.add_argument("--port", type=int, default=8000, help="port to bind (default 8000)")
    from shell.headless.history import add_parsers

    add_parsers(sub, _common)
    cli_tools.add_parser(sub)
    cli_sync.add_parsers(sub, _common)
    _common(sub.choices["tools"], inherit=True)
    _model(sub.choices["tools"], inherit=True)
    return parser


def settings_from(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {
        "workspace": getattr(args, "directory", None) or args.workspace,
        "model": DEMO_MODEL if args.demo else args.model,
        "api_base": args.api_base,
        "context_window": args.context_window,
    }
    settings = load_settings(overrides)
    if args.command in (None, "run", "serve", "tools"):  # the commands that run an agent
        settings = cli_tools.with_tool_options(settings, args)
    return settings


def _inputs(args: argparse.Namespace) -> list[str]:
    inputs = list(args.messages) if args.messages else [line.rstrip("\n") for line in sys.stdin]
    if args.flush:
        inputs.append("/flush")
    if args.compact is not None:
        inputs.append(f"/compact {args.compact}".strip())
    return inputs


def dispatch(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    match args.command:
        case "init" if args.remote:
            return cli_sync.clone_command(settings, args.remote, sys.stdout)
        case "remote":
            return cli_sync.remote_command(settings, args, sys.stdout)
        case "sync":
            return cli_sync.sync_command(settings, args, sys.stdout)
        case "init":
            from shell.workspace import init_workspace

            init_workspace(settings)
            print(f"Workspace ready at {settings.workspace}")
            return 0
        case "run":
            from shell.headless.run import run_headless

            return asyncio.run(
                run_headless(
                    settings,
                    _inputs(args),
                    session_id=args.session,
                    resume=args.resume,
                    trace=args.trace,
                )
            )
        case "search":
            from shell.headless.run import search_command

            if args.k < 1 or args.k > 50:
                raise ConfigError("-k must be between 1 and 50")
            return search_command(
                settings, " ".join(args.query), k=args.k, as_json=args.json, out=sys.stdout
            )
        case "index":
            from shell.headless.run import index_command

            action = "status" if args.status else "rebuild" if args.rebuild else "sync"
            return index_command(settings, action=action, out=sys.stdout)
        case "dream":
            from shell.dreaming import Decision
            from shell.headless.run import dream_command

            decisions = [
                *(Decision("accept", i, over_budget=args.over_budget) for i in args.apply),
                *(
                    Decision("accept", i, text, over_budget=args.over_budget)
                    for i, text in args.edit
                ),
                *(Decision("reject", i) for i in args.reject),
            ]
            return asyncio.run(
                dream_command(
                    settings,
                    decisions,
                    apply_all=args.apply_all,
                    over_budget=args.over_budget,
                    as_json=args.json,
                    out=sys.stdout,
                )
            )
        case "history":
            from shell.headless.history import history_command

            return history_command(settings, limit=args.n, as_json=args.json, out=sys.stdout)
        case "revert":
            from shell.headless.history import revert_command

            return revert_command(
                settings, args.sha, yes=args.yes, as_json=args.json, out=sys.stdout
            )
        case "tools":
            return cli_tools.run_tools_command(settings, args, sys.stdout)
        case "serve":
            from widgets.serve import serve

            return serve(args, settings.workspace)
        case "replay":
            from widgets.replay import load_trace, replay_app

            if not args.trace_file.is_file():
                raise ConfigError(f"no trace file at {args.trace_file}")
            try:
                events = load_trace(args.trace_file)
            except ValueError as error:
                raise ConfigError(f"bad trace {error}") from None
            replay_app(events, settings.workspace, stepped=args.step).run()
            return 0
        case _:
            # What the first frame builds stays: the collector waits until it is on screen
            # (0.64 s → 0.56 s to the first frame, median of 9 pairs), or the TUI quits.
            with contextlib.ExitStack() as startup:
                startup.enter_context(collector_paused())
                from shell.context.budget import configured_budget
                from widgets.app import run_tui
                from widgets.source import AgentPlan, AgentSource

                def build() -> AgentSource:  # after the first frame: see `AgentPlan`
                    with collector_paused():
                        from shell.build import build_agent

                        return build_agent(settings, session_id=args.session, resume=args.resume)

                plan = AgentPlan(settings, configured_budget(settings), build)
                run_tui(plan, trace=args.trace, after_first_frame=startup.close)
            return 0


def main(argv: list[str] | None = None) -> None:
    # The vector leg is one memory-bound matrix-vector product: extra BLAS threads only contend
    # (measured 16 ms with default threads vs 0.7 ms single-threaded at 10k chunks). Must be set
    # before numpy loads.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    args = build_parser().parse_args(argv)
    try:
        code = dispatch(args)
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:  # the reader went away (`| head -1`): stop quietly, as git does
        with contextlib.suppress(OSError):  # what is still buffered goes nowhere, silently
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = EXIT_CLOSED_PIPE
    except Exception as error:  # the one place that turns any failure into one clear line
        message = str(error) or type(error).__name__
        print(f"cairn: error: {message}", file=sys.stderr)
        code = 2 if isinstance(error, ConfigError) else 1
    # Skip the interpreter's teardown of litellm's thousands of modules (about a second at
    # every exit): what Cairn writes is fsynced or closed by now; only stdio needs a flush.
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:  # a reader that went away (`| head`) is not an error
            code = EXIT_CLOSED_PIPE if code == 0 and stream is sys.stdout else code
        except OSError:
            pass
    os._exit(code)

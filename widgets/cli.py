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
    cairn serve [--host H] [--port P] [--token T] the TUI in a browser, on 127.0.0.1:8000
          [--max-sessions N]                      (the page and its websocket want the token)
    cairn tools [--json]                          the tools, their approvals, the MCP servers
    cairn remote add URL | sync | init --remote URL   one memory on every machine
    cairn history [--json] [-n N]                 the memory's commits
    cairn revert SHA [--yes]                      undo one memory commit as a new commit
    cairn why FILE:LINE | --turn SESSION:TURN     where a memory line came from (session, turn)
    cairn forget FILE:LINE | --text T [--yes]     a line out of the files, history, index and remote
    cairn mcp [--read-only] [--http [--port P]]   this memory for any agent, over MCP
    cairn acp [--demo] [--yes] [--allow RULE]     Cairn as an ACP agent (Toad, Zed) on stdio

The headless commands live in `shell.headless` (`commands.HEADLESS`); this module adds the TUI,
`serve` and `replay`, parses, and dispatches. Errors print one clear line and exit non-zero;
never a traceback. A reader that closes the pipe early (`cairn run … | head -1`) ends the
command quietly with exit code 141.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from shell.config import ConfigError, Settings, config_dir
from shell.headless.commands import HEADLESS, Family
from shell.headless.options import (
    Subcommands,
    add_agent_options,
    add_workspace,
    root_parser,
    settings_from,
)
from shell.headless.output import Out, Printable
from shell.heavy_import import collector_paused
from shell.text.printable import printable

if TYPE_CHECKING:
    from shell.events import Event

EXIT_CLOSED_PIPE = 141
"""The exit code when stdout's reader closed the pipe: 128 + SIGPIPE, what a shell reports for
a command SIGPIPE ended (git, coreutils), so a pipeline with `set -o pipefail` can tell a cut
run from a complete one; nothing is printed."""


def _add_replay(sub: Subcommands) -> None:
    replay = sub.add_parser("replay", help="play a recorded trace back into the TUI")
    add_workspace(replay, inherit=True)
    replay.add_argument("trace_file", type=Path, help="a trace written by --trace")
    replay.add_argument("--step", action="store_true", help="play one turn per Enter")


def _replay(settings: Settings, args: argparse.Namespace, out: Out) -> int:
    from widgets.replay import load_trace, replay_app

    if not args.trace_file.is_file():
        raise ConfigError(f"no trace file at {args.trace_file}")
    try:
        events = load_trace(args.trace_file)
    except ValueError as error:
        raise ConfigError(f"bad trace {error}") from None
    replay_app(events, settings.workspace, stepped=args.step).run()
    return 0


def _add_serve(sub: Subcommands) -> None:
    serve = sub.add_parser("serve", help="the TUI in a browser (widgets/serve.py)")
    add_agent_options(serve, inherit=True)
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (warns if wider)")
    serve.add_argument("--port", type=int, default=8000, help="port to bind (default 8000)")
    serve.add_argument(
        "--token",
        help="the secret the page and the websocket want (default: $CAIRN_SERVE_TOKEN, else a "
        "new random one, printed in the URL); other users see it in `ps`: prefer the variable",
    )
    serve.add_argument(
        "--max-sessions",
        type=int,
        default=4,
        help="TUIs running at once; the next connection is refused (default 4)",
    )


def _serve(settings: Settings, args: argparse.Namespace, out: Out) -> int:
    from widgets.serve import serve

    return serve(args, settings.workspace)


FAMILIES = (
    *(HEADLESS[name] for name in ("init", "run", "search", "index", "dream")),
    Family(_add_replay, {"replay": _replay}),
    Family(_add_serve, {"serve": _serve}, runs_agent=True),
    *(HEADLESS[name] for name in ("history", "why", "tools", "sync", "forget", "mcp", "acp")),
)
"""Every subcommand, in the order `cairn --help` lists them."""


def build_parser() -> argparse.ArgumentParser:
    parser = root_parser()
    sub = parser.add_subparsers(dest="command")
    for family in FAMILIES:
        family.add(sub)
    return parser


def dispatch(args: argparse.Namespace) -> int:
    if args.command is None:
        return _tui(settings_from(args, runs_agent=True), args)
    [family] = [family for family in FAMILIES if args.command in family.runs]
    settings = settings_from(args, runs_agent=family.runs_agent)
    return family.runs[args.command](settings, args, Printable(sys.stdout))


def _tui(settings: Settings, args: argparse.Namespace) -> int:
    # What the first frame builds stays: the collector waits until it is on screen
    # (0.64 s → 0.56 s to the first frame, median of 9 pairs), or the TUI quits.
    with contextlib.ExitStack() as startup:
        startup.enter_context(collector_paused())
        from shell.context.budget import configured_budget
        from widgets.app import CairnApp
        from widgets.source import AgentPlan, AgentSource

        session_id = args.session
        history: Callable[[], list[Event]] = list
        if session_id or args.resume:  # a resumed view comes with the first frame
            from shell.session.store import SessionStore

            sessions = SessionStore(settings.state_dir, settings.clock)
            if record := sessions.opened(session_id, resume=args.resume):
                session_id = record.session_id
                history = functools.partial(sessions.views.read, session_id)

        def build() -> AgentSource:  # after the first frame: see `AgentPlan`
            with collector_paused():
                from shell.build import build_agent

                return build_agent(settings, session_id=session_id, resume=args.resume)

        plan = AgentPlan(settings, configured_budget(settings), build, session_id or "", history)
        folder = config_dir()  # user themes in its `themes/`, the chosen one in `state.toml`
        app = CairnApp(
            plan,
            trace=args.trace,
            theme_dir=folder / "themes",
            config_dir=folder,
            after_first_frame=startup.close,
        )
        app.run()
    if app.build_error is not None:  # the plan failed to build: the app has closed, say why
        raise app.build_error
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
        print(f"cairn: error: {printable(message)}", file=sys.stderr)
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

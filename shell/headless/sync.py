"""One memory on every machine, from the shell (`shell.sync`).

    cairn remote add URL [--branch NAME] sync this workspace with URL (histories merged)
    cairn sync [--json]                  pull, then push
    cairn sync --resolve FILE --take local|remote|both
                                         settle a conflict the last sync left for review
    cairn sync --redact-unpushed [--yes] what rewriting the commits not pushed yet with their
                                         secrets redacted would change; --yes rewrites, syncs
    cairn init --remote URL [DIR]        a second machine joins: a clone of URL

Which of the remote's branches the memory lives on: `shell.sync.clone`'s rule, or `--branch`.

Each prints one line per event (or JSON with `--json`); the exit code is 1 when the sync failed.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from shell.config import ConfigError, Settings
from shell.events import (
    Event,
    Notice,
    SyncConflict,
    SyncFailed,
    SyncRedacted,
    SyncRedactionPreviewed,
)
from shell.headless.options import add_branch
from shell.headless.output import Out
from shell.secrets.door import event_line
from shell.sync.describe import redaction_preview, sync_line

if TYPE_CHECKING:
    from shell.sync import SyncEngine


def add_parsers(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    common: Callable[..., None],
) -> None:
    remote = sub.add_parser("remote", help="the git remote the memory syncs with")
    common(remote, inherit=True)
    actions = remote.add_subparsers(dest="remote_action", required=True)
    add = actions.add_parser("add", help="sync this workspace with URL (histories merged)")
    add.add_argument("url", help="any URL git takes: a path, ssh://, https://, git://")
    add_branch(add)
    common(add, inherit=True)
    sync = sub.add_parser("sync", help="pull the memory from its remote, then push")
    common(sync, inherit=True)
    sync.add_argument("--resolve", metavar="FILE", help="settle the open conflict of FILE")
    sync.add_argument(
        "--take", choices=("local", "remote", "both"), help="with --resolve: which side to keep"
    )
    sync.add_argument(
        "--redact-unpushed",
        action="store_true",
        help="unblock a push a secret stopped: show how the commits not pushed yet would be "
        "rewritten with it redacted (the pushed ones never are)",
    )
    sync.add_argument(
        "--yes", action="store_true", help="with --redact-unpushed: rewrite them, then sync"
    )
    sync.add_argument("--json", action="store_true", help="one JSON event per line")


def _engine(settings: Settings) -> tuple[SyncEngine, list[Event]]:
    """The workspace's sync, and what recovering from an interrupted memory change said: a
    sync must not push a half state."""
    from shell.recovery import recover_interrupted
    from shell.sync import SyncEngine
    from shell.workspace import init_workspace

    recovered = recover_interrupted(settings.workspace, init_workspace(settings))
    engine = SyncEngine(
        settings.workspace,
        author_name=settings.git_author_name,
        author_email=settings.git_author_email,
    )
    return engine, recovered


def remote_command(settings: Settings, args: argparse.Namespace, out: Out) -> int:
    engine, recovered = _engine(settings)
    events = [*recovered, *engine.add_remote(args.url, branch=args.branch)]
    return _report(events, as_json=False, out=out)


def sync_command(settings: Settings, args: argparse.Namespace, out: Out) -> int:
    engine, events = _engine(settings)
    if args.resolve:
        if not args.take:
            raise ConfigError("--resolve FILE needs --take local, remote or both")
        events += engine.resolve(args.resolve, args.take)
    elif args.redact_unpushed:
        hint = "" if args.yes else "to rewrite them so: cairn sync --redact-unpushed --yes"
        events += [*engine.recover(), *engine.redact_unpushed(apply=args.yes, hint=hint)]
        if any(isinstance(e, SyncRedacted) for e in events) and not any(
            isinstance(e, SyncFailed) for e in events
        ):
            events += engine.sync()
    elif args.yes:
        raise ConfigError("--yes goes with --redact-unpushed")
    else:
        events += [*engine.recover(), *engine.sync()]
    return _report(events, as_json=args.json, out=out)


def clone_command(settings: Settings, url: str, out: Out, *, branch: str | None = None) -> int:
    """`cairn init --remote URL [--branch NAME] [DIR]`: clone, then seed what the remote lacks."""
    from shell.sync import clone_workspace
    from shell.workspace import init_workspace

    events: list[Event] = [*clone_workspace(url, settings.workspace, branch=branch)]
    if not any(isinstance(event, SyncFailed) for event in events):
        init_workspace(settings)
    return _report(events, as_json=False, out=out)


def _report(events: Sequence[Event], *, as_json: bool, out: Out) -> int:
    for event in events:
        if as_json:
            out.write(event_line(event) + "\n")
        elif isinstance(event, SyncRedactionPreviewed):
            out.write(redaction_preview(event) + "\n")
        elif isinstance(event, Notice):
            out.write(f"{event.level}: {event.message}\n")
        elif line := sync_line(event):
            out.write(line + "\n")
        if isinstance(event, SyncConflict) and not as_json:
            out.write(event.diff.rstrip() + "\n")
            out.write(f"resolve with: cairn sync --resolve {event.file} --take local|remote|both\n")
    return 1 if any(isinstance(event, SyncFailed) for event in events) else 0

"""`cairn forget`: a line out of the memory for real, headless (`shell.forget`).

    cairn forget FILE:LINE [--yes] [--json]   the line at LINE of a memory file
    cairn forget --text "..." [--yes] [--json] the line, wherever it is (files, history, .cairn)
    cairn forget ... --scope project            in the project folder's memory (default global)

Without `--yes` nothing changes: it says where the line is and how many commits and files
forgetting it would rewrite. With `--yes` the history is purged, the index rebuilt, `.cairn/`
scrubbed, and the purged history forced onto the remote (with a lease) when there is one. What
it prints names places and counts, never the text. Exit code 1 when it failed.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from shell.config import ConfigError, Settings
from shell.events import Event, MemoryForgotten, Notice, SyncFailed
from shell.headless.output import Out
from shell.headless.scoped import add_scope_options, one_memory
from shell.secrets.door import event_line
from shell.sync.describe import sync_line
from shell.text import counted

if TYPE_CHECKING:
    from shell.memory.index.memory_index import MemoryIndex


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: Callable[..., None]
) -> None:
    forget = sub.add_parser(
        "forget", help="forget a memory line everywhere: files, history, remote, index"
    )
    common(forget, inherit=True)
    forget.add_argument("place", nargs="?", help="FILE:LINE of a memory file")
    forget.add_argument("--text", help="the line itself, instead of FILE:LINE")
    forget.add_argument("--yes", action="store_true", help="forget it (else: a preview)")
    forget.add_argument("--json", action="store_true", help="one JSON event per line")
    add_scope_options(forget, one=True)


def run_forget(settings: Settings, args: argparse.Namespace, out: Out) -> int:
    from shell.forget import ForgetError, Identity, forget
    from shell.headless.sync import _engine

    if (args.place is None) == (args.text is None):
        raise ConfigError("give FILE:LINE or --text (one of them)")
    root = one_memory(settings, args)
    events: list[Event] = []
    engine = None
    if root == settings.workspace:  # the global memory syncs; a project's does not
        engine, events = _engine(settings)
        events += engine.recover()
    index = _index(replace(settings, workspace=root)) if args.yes else None
    try:
        events += forget(
            root,
            place=args.place,
            text=args.text,
            apply=args.yes,
            identity=Identity(settings.git_author_name, settings.git_author_email),
            engine=engine,
            index=index,
            sessions=settings.workspace,
        )
    except ForgetError as error:
        events.append(SyncFailed(kind="error", message=f"not forgotten: {error}"))
    finally:
        if index is not None:
            index.close()
    for event in events:
        if args.json:
            out.write(event_line(event) + "\n")
        elif isinstance(event, MemoryForgotten):
            out.write(forgotten_lines(event))
        elif isinstance(event, Notice):
            out.write(f"{event.level}: {event.message}\n")
        elif line := sync_line(event):
            out.write(line + "\n")
    return 1 if any(isinstance(event, SyncFailed) for event in events) else 0


def forgotten_lines(event: MemoryForgotten) -> str:
    """What a forget did (or would do), a line each."""
    verb = "forgot" if event.applied else "would forget"
    lines = [f"{verb} the line {event.tombstone[:19]}… (its tombstone)"]
    lines += [f"  in {place}" for place in event.places]
    lines.append(
        f"  history: {counted(event.commits, 'commit')} rewritten, "
        f"{counted(len(event.files), 'file')} changed"
        + (": " * bool(event.files))
        + ", ".join(event.files)
    )
    if event.applied:
        lines.append(
            f"  index: {counted(event.index_rows, 'row')}; hit log: "
            f"{event.hit_log_entries}, dream state: {event.dream_entries} entries dropped; "
            f"transcripts: {counted(event.transcripts, 'file')} marked"
        )
        lines.append(
            "  old objects: " + ("pruned" if event.objects_pruned else "still held (see above)")
        )
        lines.append(
            "  remote: purged history pushed"
            if event.pushed
            else f"  remote: not pushed ({event.push_error})"
            if event.push_error
            else "  remote: none"
        )
    else:
        lines.append(f"  .cairn files holding it: {event.transcripts}")
        lines.append("  to forget it so: add --yes")
    return "".join(f"{line}\n" for line in lines)


def _index(settings: Settings) -> MemoryIndex | None:
    """The workspace's index, to rebuild without the line (None: it cannot be opened, and the
    forget removes it if it holds the line; it is rebuilt at its next opening)."""
    try:
        from shell.memory.service import RecallService

        return RecallService(settings).index
    except Exception:
        return None

"""`cairn why`: where a memory line came from, headless.

    cairn why FILE:LINE [--json]         the commits that brought the line, the session, turn and
                                         message that wrote it, and that turn's other writes
    cairn why --turn SESSION:TURN        a turn: its prompt, answer and writes

FILE:LINE also takes a search hit's citation (`memory/2026-12-01.md#L3`); `--scope project`
looks in the project folder's memory (a hit labelled `[project:…]`), global by default. Exit 1
when the line has no provenance (not committed) or cannot be looked up.
"""

from __future__ import annotations

import argparse
import json
import re

from shell.config import ConfigError, Settings
from shell.git.history_commit import HistoryCommit
from shell.headless.options import Subcommands, add_workspace
from shell.headless.output import Out
from shell.headless.scoped import add_scope_options, one_memory
from shell.session.turns import PastTurn
from shell.text import shorten
from shell.why import Traced, Why


def add_parser(sub: Subcommands) -> None:
    why = sub.add_parser(
        "why",
        help="where a memory line came from",
        description="Trace a memory line to the commits, session, turn and message that "
        "wrote it (git blame, so lines added above it later do not matter).",
    )
    add_workspace(why, inherit=True)
    why.add_argument("place", nargs="?", help="FILE:LINE, e.g. MEMORY.md:12 or memory/X.md#L3")
    why.add_argument("--turn", metavar="SESSION:TURN", help="show a turn and its writes instead")
    why.add_argument("--json", action="store_true", help="print it as one JSON object")
    add_scope_options(why, one=True)


def run_why(settings: Settings, args: argparse.Namespace, out: Out) -> int:
    from shell.memory.provenance import ProvenanceError, parse_place
    from shell.workspace import existing_workspace

    existing_workspace(settings)
    why = Why.at(one_memory(settings, args), settings.state_dir)  # sessions: the global's
    if args.turn:
        if args.place:
            raise ConfigError("give FILE:LINE or --turn, not both")
        return _turn(why, args.turn, as_json=args.json, out=out)
    if not args.place:
        raise ConfigError("cairn why needs FILE:LINE (or --turn SESSION:TURN)")
    try:
        traced = why.line(*parse_place(args.place))
    except ProvenanceError as error:
        raise ConfigError(str(error)) from None
    if args.json:
        out.write(json.dumps(traced.as_json(), ensure_ascii=False) + "\n")
    else:
        out.write("\n".join(traced_lines(traced)) + "\n")
    return 0 if traced.provenance.steps else 1


def traced_lines(traced: Traced) -> list[str]:
    """The trace in words, as `cairn why` prints it."""
    p = traced.provenance
    lines = [f"{p.path}:{p.line}  {p.text.strip()}"]
    if not p.steps:
        return [*lines, f"  no provenance: {p.unknown}"]
    for step in p.steps:
        lines.append(f"  {step.summary()}")
        if (step.path, step.line) != (p.path, p.line):
            lines.append(f"    as {step.path}:{step.line}")
    if traced.turn_missing:
        lines.append(f"  the turn: {traced.turn_missing}")
    if traced.turn is not None:
        lines += ["", *turn_lines(traced.turn, traced.writes)]
    return lines


def turn_lines(turn: PastTurn, writes: list[HistoryCommit]) -> list[str]:
    """A turn in words: its prompt, the call that wrote, its answer and its writes."""
    lines = [f"session {turn.session_id} turn {turn.turn}"]
    if turn.prompt is not None:
        lines.append(f"  asked: {shorten(' '.join(turn.prompt.split()), 300)}")
    if turn.call is not None:
        arguments = json.dumps(turn.call.arguments, ensure_ascii=False)
        lines.append(f"  call: {turn.call.name} {shorten(arguments, 300)}")
    if turn.reply is not None:
        lines.append(f"  answered: {shorten(' '.join(turn.reply.split()), 300)}")
    lines.append(f"  its writes ({len(writes)}):")
    lines += [f"    {c.short} {c.subject} ({', '.join(c.files)})" for c in writes]
    return lines


def _turn(why: Why, place: str, *, as_json: bool, out: Out) -> int:
    match = re.fullmatch(r"(?P<session>[0-9A-Za-z-]+):(?P<turn>\d+)", place.strip())
    if match is None:
        raise ConfigError(f"--turn {place!r} is not SESSION:TURN (e.g. 20261207-040826-e1bcbb:2)")
    found, writes = why.turn(match["session"], int(match["turn"]))
    if as_json:
        shown: dict[str, object] = (
            {"turn_missing": found} if isinstance(found, str) else found.as_json()
        )
        shown["writes"] = [commit.as_json() for commit in writes]
        out.write(json.dumps(shown, ensure_ascii=False) + "\n")
        return 1 if isinstance(found, str) else 0
    if isinstance(found, str):
        out.write(f"{found}\n")
        out.write(f"its writes ({len(writes)}):\n")
        out.write("".join(f"  {c.short} {c.subject}\n" for c in writes))
        return 1
    out.write("\n".join(turn_lines(found, writes)) + "\n")
    return 0

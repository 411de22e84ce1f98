"""What the other machines did to a conflict, told on this one as it takes their commits in.

A merge that met a conflict says so in a `Cairn-Held` trailer (the file then holds both sides'
lines until it is settled there); a resolution that removed lines, in a `Cairn-Resolved` trailer.
A sync that takes such commits in says which file waits on another machine, and which lines a
person's resolution there removed, so no line leaves this machine unsaid.
"""

from __future__ import annotations

from pathlib import Path

from shell.events.turns import Notice
from shell.git.runner import Git
from shell.sync.pull import HELD
from shell.sync.repair import RESOLVED

SHOWN = 10
"""Removed lines named in a notice; the rest are counted."""


def told(git: Git, root: Path, old: str, new: str) -> list[Notice]:
    """The notices for the commits `new` brought that `old` lacked."""
    log = git.run(["log", "--format=%H%x1f%B%x1e", f"{old}..{new}"], check=False).stdout
    held: set[str] = set()
    removed: dict[str, dict[str, None]] = {}
    for entry in log.split("\x1e"):
        sha, _, body = entry.strip().partition("\x1f")
        for line in body.splitlines():
            name, _, value = line.partition(": ")
            if name == HELD and value:
                held.add(value)
            elif name == RESOLVED and value:
                file = value.rsplit(" ", 1)[0]
                for line_gone in _removed(git, sha, file):
                    removed.setdefault(file, {})[line_gone] = None
    notices = [
        Notice(
            f"{file} waits for review on another machine (both sides changed it); until it is "
            "settled there it holds both sides' lines",
        )
        for file in sorted(held - set(removed))
    ]
    for file, lines in sorted(removed.items()):
        current = _lines(root / file)
        gone = [line for line in lines if line not in current]
        if gone:
            named = "; ".join(gone[:SHOWN]) + (
                f"; and {len(gone) - SHOWN} more" * (len(gone) > SHOWN)
            )
            notices.append(
                Notice(
                    f"a resolution of {file} on another machine removed {len(gone)} "
                    f"line{'s' * (len(gone) != 1)}: {named}",
                    level="warning",
                )
            )
    return notices


def _removed(git: Git, sha: str, file: str) -> list[str]:
    diff = git.run(
        ["diff", "--no-color", "--unified=0", f"{sha}^", sha, "--", file], check=False
    ).stdout
    return [
        line[1:]
        for line in diff.splitlines()
        if line.startswith("-") and not line.startswith("---") and line[1:].strip()
    ]


def _lines(path: Path) -> set[str]:
    try:
        return set(path.read_text(encoding="utf-8", errors="replace").splitlines())
    except OSError:
        return set()

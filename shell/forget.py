"""`forget`: the one core call that forgets a line (`cairn forget`, and the TUI's later).

It finds the line (a `file:line` of a memory file, or the text), keeps its tombstone in
`.cairn-forgotten` (a commit of its own), purges every commit reachable from HEAD of it
(`shell.memory.forget.purge`), moves HEAD and the working tree there (journalled: a kill in
between is undone at the next start, and the next sync purges again, the tombstone being
committed), scrubs `.cairn/` (`shell.memory.forget.state`), rebuilds the index when one is
given, and, with a remote, syncs: the sync forces the purged history onto the remote with a lease
(`shell.sync.forgotten`). Last, reflogs are expired and the repository is garbage-collected,
and every object left is read to check that none holds the line. Without `apply` nothing
changes: the event says what would be rewritten.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from shell.events import Event, MemoryForgotten, Notice, SyncFailed, SyncFinished
from shell.fsio import exclusive_lock
from shell.git.lock import repo_lock
from shell.git.objects import STORED
from shell.git.runner import Git
from shell.memory.files.commits import MEMORY_LOCK
from shell.memory.forget.purge import holds_anywhere, purge
from shell.memory.forget.state import pattern, scrub_state
from shell.memory.forget.tombstones import (
    FILE,
    TombstoneError,
    Tombstones,
    forgettable,
    load,
    render,
)
from shell.memory.paths import MemoryPathError, is_memory_file, locate
from shell.sync.forgotten import REASON, lines_holding, owe_prune, tidy
from shell.sync.prepare import commit_files, commit_outside_edits, ensure_ignored
from shell.sync.redact import move_head

if TYPE_CHECKING:
    from shell.memory.index.memory_index import MemoryIndex
    from shell.sync import SyncEngine


class ForgetError(ValueError):
    """What was asked cannot be forgotten; nothing changed. The message says why."""


@dataclass(frozen=True)
class Identity:
    """Who commits the tombstone, and when."""

    name: str
    email: str
    clock: Callable[[], datetime] | None = None


def forget(
    root: Path,
    *,
    place: str | None = None,
    text: str | None = None,
    apply: bool,
    identity: Identity,
    engine: SyncEngine | None = None,
    index: MemoryIndex | None = None,
    sessions: Path | None = None,
) -> list[Event]:
    """Forget the line at `place` (`file:line`) or the line `text`; with `apply`, for real.
    `sessions`: the workspace whose `.cairn/` keeps the sessions and traces that may hold the
    line too, when it is not `root` (a project's memory: the sessions are the global one's).

    Returns a MemoryForgotten (a preview without `apply`), after the sync's events when there
    is a remote (`engine`). Raises ForgetError for a line that cannot be forgotten or is
    nowhere, a path outside the memory files, or a tombstone file that cannot be trusted."""
    root = Path(root).resolve()
    line = line_at(root, place) if place is not None else (text or "")
    try:
        tombstone = forgettable(line)
        every = load(root) | tombstone
    except TombstoneError as error:
        raise ForgetError(str(error)) from None
    digest = next(iter(tombstone.words))
    git = Git(root, author_name=identity.name, author_email=identity.email, clock=identity.clock)
    head = git.rev("HEAD")
    if head is None:
        raise ForgetError("this workspace has no commit yet: nothing to forget")
    places = _places(git, root, tombstone)
    found = pattern(tombstone.spans(line))
    in_state = sum(_state_files(where, found) for where in {root, (sessions or root).resolve()})
    if not places and not in_state and not holds_anywhere(git, head, tombstone):
        raise ForgetError(
            "that line is in no file, commit or transcript of this workspace: nothing forgotten"
        )
    if not apply:
        would = purge(git, head, tombstone)
        return [
            MemoryForgotten(
                tombstone=f"sha256:{digest}",
                applied=False,
                places=places,
                commits=would.commits,
                files=_changed(git, head, would.head),
                transcripts=in_state,
            )
        ]
    known = set(tombstone.spans(line))
    return _apply(root, git, every, tombstone, known, places, engine, index, sessions)


def _apply(
    root: Path,
    git: Git,
    every: Tombstones,
    tombstone: Tombstones,
    known: set[str],
    places: list[str],
    engine: SyncEngine | None,
    index: MemoryIndex | None,
    sessions: Path | None = None,
) -> list[Event]:
    digest = next(iter(tombstone.words))
    git_dir = Path(git.out("rev-parse", "--absolute-git-dir"))
    with exclusive_lock(root / MEMORY_LOCK), repo_lock(root):  # as a memory write, and a revert
        ensure_ignored(root, git_dir)
        commit_outside_edits(git)
        spots = {
            name: lines
            for name in git.out("ls-files", "-z").split("\0")
            if name and is_memory_file(name) and (lines := lines_holding(root / name, tombstone))
        }
        (root / FILE).write_text(render(every), encoding="utf-8")
        commit_files(git, [FILE], f"forget: a line (sha256:{digest[:12]}), purged from history")
        head = git.out("rev-parse", "HEAD")
        purged = purge(git, head, every)
        owe_prune(root)
        files = move_head(git, root, head, purged.head, REASON)
        spans = known | {span for line in purged.lines for span in every.spans(line)}
        rows = _index_rows(index, spots, spans)
        scrubbed = scrub_state(root, spans, spots, index=index is None)
        if sessions is not None and sessions.resolve() != root:
            elsewhere = scrub_state(sessions.resolve(), spans, {}, index=False)
            scrubbed.transcripts += elsewhere.transcripts
            scrubbed.dream_entries += elsewhere.dream_entries
    if index is not None:
        index.rebuild("forget")
    events: list[Event] = []
    pushed, push_error = False, None
    if engine is not None and engine.status().remote is not None:
        synced = engine.sync(purged=(every, purged))  # it prunes once the remote is purged
        events.extend(synced)
        pushed = any(isinstance(event, SyncFinished) for event in synced)
        push_error = next((e.message for e in synced if isinstance(e, SyncFailed)), None)
    else:
        with repo_lock(root):
            tidy(git, git_dir, root)
    held = objects_holding(git, spans)
    if held:
        why = "the remote is not purged yet: the next sync prunes them" if push_error else ""
        events.append(
            Notice(
                f"{held} git object(s) still hold the line ({why or 'a ref holds them'})", "warning"
            )
        )
    events.append(
        MemoryForgotten(
            tombstone=f"sha256:{digest}",
            applied=True,
            places=places,
            commits=purged.commits - (purged.head != head),  # not the tombstone's own
            files=[name for name in files if name != FILE],
            index_rows=rows,
            hit_log_entries=scrubbed.hit_log_entries,
            dream_entries=scrubbed.dream_entries,
            transcripts=scrubbed.transcripts,
            objects_pruned=held == 0,
            pushed=pushed,
            push_error=push_error,
        )
    )
    return events


def objects_holding(git: Git, spans: set[str]) -> int:
    """How many objects of the repository hold one of `spans` (every object read, loose or
    packed, reachable or not)."""
    found = pattern(spans)
    if found is None:
        return 0
    _, out = git.run_bytes(
        ["cat-file", "--batch-all-objects", "--batch", "--unordered"], env=STORED
    )
    held, at = 0, 0
    while at < len(out):
        end = out.index(b"\n", at)
        header = out[at:end].split()
        size = int(header[2]) if len(header) == 3 else 0
        body = out[end + 1 : end + 1 + size]
        if found.search(body.decode("utf-8", "surrogateescape")):
            held += 1
        at = end + 1 + size + 1
    return held


def line_at(root: Path, place: str) -> str:
    """The line `place` (`file:line` of a memory file) names; ForgetError when none."""
    name, sep, number = place.rpartition(":")
    if not sep or not number.isdigit() or int(number) < 1:
        raise ForgetError(f"{place}: give FILE:LINE (a line number from 1), or --text")
    try:
        path, _ = locate(root, name)
    except MemoryPathError as error:
        raise ForgetError(f"{name}: {error}") from None
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise ForgetError(f"{name} cannot be read: {error}") from None
    if int(number) > len(lines):
        raise ForgetError(f"{name} has {len(lines)} line(s): there is no line {number}")
    return lines[int(number) - 1]


def _places(git: Git, root: Path, tombstone: Tombstones) -> list[str]:
    """Every `file:line` of the tracked text files that holds the line."""
    places: list[str] = []
    for name in git.out("ls-files", "-z").split("\0"):
        if name and name != FILE:
            places.extend(f"{name}:{n}" for n in sorted(lines_holding(root / name, tombstone)))
    return places


def _changed(git: Git, old: str, new: str) -> list[str]:
    if old == new:
        return []
    listed = git.run(["diff", "--name-only", "-z", "--no-renames", old, new]).stdout
    return [name for name in listed.split("\0") if name and name != FILE]


def _state_files(root: Path, found: re.Pattern[str] | None) -> int:
    """How many files of `.cairn/` (but the index) hold the line."""
    state = root / ".cairn"
    if found is None or not state.is_dir():
        return 0
    count = 0
    for path in state.rglob("*"):
        if path.is_file() and path.relative_to(state).parts[0] not in ("index", "locks"):
            try:
                if found.search(path.read_bytes().decode("utf-8", "surrogateescape")):
                    count += 1
            except OSError:
                continue
    return count


def _index_rows(index: MemoryIndex | None, spots: dict[str, set[int]], spans: set[str]) -> int:
    """The index's rows (units) that hold the line, before it is rebuilt without them."""
    found = pattern(spans)
    if index is None or found is None:
        return 0
    try:
        units = [chunk for name in spots for chunk in index.file_units(name)[0]]
    except Exception:  # a broken index: the rebuild starts it over all the same
        return 0
    return sum(1 for chunk in units if found.search(chunk.text))

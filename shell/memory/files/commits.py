"""Cairn's commits of memory writes: their message, their event, and the journal of writes a
kill may leave written but not committed.

Before `MemoryFiles` swaps a file's bytes it notes, in `.cairn/journal.json`, the file, the
fingerprint of what it is about to write and the commit's message; the note goes once the
commit is made. Memory writes are serialised across processes (the door's lock), so one journal
serves every Cairn of the workspace. At the next start (`recover`), a file that still holds
what the journal says and that git does not hold is Cairn's own write, interrupted: it is
committed with its message, as Cairn's, and said; anything else in the journal is history.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import cast, get_args

from shell.events import Event, MemoryWritten, Notice, WriteReason
from shell.fsio import exclusive_lock
from shell.git.store import CommitOutcome, GitStore
from shell.memory.files.swap import replace_if_unchanged
from shell.memory.lines import changed_lines
from shell.secrets.door import redacted, write_private
from shell.seen import digest

JOURNAL = Path(".cairn") / "journal.json"
MEMORY_LOCK = Path(".cairn") / "locks" / "memory.lock"
"""The lock every memory write holds (`MemoryFiles`), across processes."""
RECOVERED = "recovered after an interrupted write"
"""Added to a recovered write's commit message."""


def commit_message(reason: str, summary: str, origin: str) -> str:
    """A commit's message, redacted whatever the policy: a summary may quote what was written
    (a dream's proposal), and a message is pushed like the files."""
    first = f"memory({reason}): {redacted(summary)}"
    return f"{first}\n\n{redacted(origin.strip())}\n" if origin.strip() else f"{first}\n"


def written_event(
    name: str,
    before: bytes,
    data: bytes,
    reason: WriteReason,
    outcome: CommitOutcome,
    scope: str = "global",
    citations_unhashed: list[str] | None = None,
) -> MemoryWritten:
    """The event of a whole-file write of `data` over `before`, in the memory `scope`;
    `citations_unhashed`: the citations of its new lines that got no hash, with why."""
    added, removed = changed_lines(before, data)
    return MemoryWritten(
        path=name,
        bytes=len(data),
        commit=outcome.sha,
        reason=reason,
        lines_added=added,
        lines_removed=removed,
        commit_error=outcome.error,
        scope=scope,
        citations_unhashed=citations_unhashed or [],
    )


class WriteJournal:
    """The journal of one workspace (`root`)."""

    def __init__(self, root: Path) -> None:
        self.file = root / JOURNAL

    def begin(self, writes: Mapping[str, bytes], message: str) -> None:
        """Note that `writes` (name → new bytes) are about to be written, to be committed with
        `message`."""
        entries = self._read_or_empty()
        entries.update(
            {name: {"sha256": digest(d), "message": message} for name, d in writes.items()}
        )
        self._save(entries)

    def end(self, names: Iterable[str]) -> None:
        """The writes of `names` are committed: forget them."""
        entries = self._read_or_empty()
        removed = [entries.pop(name, None) for name in names]  # every one: not `any`'s first
        if any(entry is not None for entry in removed):
            self._save(entries)

    def read(self) -> dict[str, dict[str, str]]:
        """The pending writes, by name.

        Raises:
            ValueError: the journal is not one Cairn wrote.
        """
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        if not isinstance(data, dict) or not all(
            isinstance(name, str)
            and isinstance(entry, dict)
            and isinstance(entry.get("sha256"), str)
            and isinstance(entry.get("message"), str)
            for name, entry in data.items()
        ):
            raise ValueError("not a journal of memory writes")
        return data

    def _read_or_empty(self) -> dict[str, dict[str, str]]:
        try:
            return self.read()
        except (OSError, ValueError):
            return {}  # recovered or set aside at the start; a write must not fail on it

    def _save(self, entries: dict[str, dict[str, str]]) -> None:
        if entries:
            write_private(self.file, json.dumps(entries, ensure_ascii=False, indent=1))
        else:
            with contextlib.suppress(FileNotFoundError):
                self.file.unlink()


def recover(root: Path, git: GitStore) -> list[Event]:
    """Commit, as Cairn's, the writes a kill left uncommitted (see the module), each with a
    `MemoryWritten` and one `Notice` for them all; a journal that cannot be read is set aside
    (`.cairn/journal.json.corrupt-<pid>`) and said. Under the memory door's lock: another
    Cairn's write in progress is not taken for an interrupted one."""
    if not (root / JOURNAL).exists():
        return []  # the usual start: no lock taken, nothing read
    with exclusive_lock(root / MEMORY_LOCK):
        return _recovered(root, git)


def _recovered(root: Path, git: GitStore) -> list[Event]:
    journal = WriteJournal(root)
    try:
        entries = journal.read()
    except (OSError, ValueError) as error:
        aside = journal.file.with_name(f"{journal.file.name}.corrupt-{os.getpid()}")
        os.replace(journal.file, aside)
        message = f"Set aside {JOURNAL} ({error}): as {aside.name}; interrupted writes, if any, "
        return [Notice(message + "will be committed as edits made outside Cairn", level="warning")]
    events: list[Event] = []
    pending: dict[str, list[tuple[str, bytes, bytes]]] = {}
    unwritten: set[str] = set()
    for name, entry in sorted(entries.items()):
        try:
            current = (root / name).read_bytes()
        except FileNotFoundError:
            current = b""
        except OSError:
            continue
        committed = git.committed(name) or b""
        if digest(current) == entry["sha256"] and current != committed:
            pending.setdefault(entry["message"], []).append((name, committed, current))
        elif current == committed and digest(committed) != entry["sha256"]:
            unwritten.add(entry["message"])  # the kill came before this file's swap
    failed: list[str] = []
    undone: list[str] = []
    for message, writes in pending.items():
        if message in unwritten:  # a change of several files that reached only some: undone
            undone += _put_back_committed(root, writes)
            continue
        first, _, rest = message.partition("\n")
        outcome = git.commit([name for name, _, _ in writes], f"{first} ({RECOVERED})\n{rest}")
        reason = _reason(first)
        events += [written_event(n, old, new, reason, outcome) for n, old, new in writes]
        if outcome.error is not None:
            failed += [name for name, _, _ in writes]  # kept: the next start tries again
    journal.end(name for name in entries if name not in failed)
    if names := [e.path for e in events if isinstance(e, MemoryWritten) and e.commit]:
        events.append(
            Notice(
                f"Committed Cairn's own write of {', '.join(names)}, which an interrupted run "
                "left uncommitted",
                level="warning",
            )
        )
    if undone:
        events.append(
            Notice(
                f"Undid an interrupted change that had reached only {', '.join(undone)} of its "
                "files: each is back to its last commit; nothing committed was lost",
                level="warning",
            )
        )
    return events


def _put_back_committed(root: Path, writes: Iterable[tuple[str, bytes, bytes]]) -> list[str]:
    """Put each file of `writes` (name, committed, current) back to its committed bytes: a
    change of several files is whole or not at all. The names put back."""
    names = []
    for name, committed, current in writes:
        path = root / name
        if committed:
            replace_if_unchanged(path, current, committed)
        else:
            path.unlink(missing_ok=True)
        names.append(name)
    return names


def _reason(subject: str) -> WriteReason:
    """The reason a memory commit's subject names ("memory(<reason>): …")."""
    named = subject.removeprefix("memory(").partition(")")[0]
    return cast(WriteReason, named) if named in get_args(WriteReason) else "tool"

"""The single door for memory reads and writes.

Only `MEMORY.md` and `memory/**/*.md` inside the workspace can pass (the confinement rules
live in `shell.memory.paths`). Every write is atomic (temp file, fsync, rename, fsync of the
folder), serialised in-process and across processes (a thread lock plus `flock` on
`.cairn/locks/memory.lock`), and committed to git with a message that says why. A curated file
is only rewritten if it was read first and has not changed on disk since; daily notes are
append-only with duplicate lines skipped.

The values a read or write takes and returns are in `shell.memory.files.values`, the swap of a
file's bytes only while it still holds what was read in `shell.memory.files.swap`, and the
secrets policy applied to what a write carries in `shell.secrets.policy`.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path

from shell.events import MemoryWritten, SecretsRedacted, WriteReason
from shell.fsio import exclusive_lock
from shell.git.store import CommitOutcome, GitStore
from shell.memory.citations.stamp import CitationStamper, stamped
from shell.memory.files.commits import MEMORY_LOCK, WriteJournal, commit_message, written_event
from shell.memory.files.guards import (
    REASONS,
    check_file_size,
    check_reason,
    check_write_size,
    policed,
    without_forgotten,
)
from shell.memory.files.swap import read_or_empty, replace_all, replace_if_unchanged
from shell.memory.files.values import Edit, MemoryWriteError, ReadResult, WriteOutcome
from shell.memory.forget.tombstones import drop_forgotten, load_or_none
from shell.memory.lines import changed_lines, new_lines
from shell.memory.paths import CURATED_FILE, DIARY_FILE, MEMORY_DIR, MemoryPathError, locate
from shell.secrets import detect as secret_scan
from shell.secrets.policy import without_new_secrets, without_secrets
from shell.seen import SeenFiles, digest
from shell.text import counted, split_lines
from shell.tools.toolbox import ToolError
from shell.tools.window import window

__all__ = [
    "CURATED_FILE",
    "DIARY_FILE",
    "MEMORY_DIR",
    "REASONS",
    "MemoryFiles",
    "MemoryPathError",
]

OUTSIDE_EDIT = "edit made outside Cairn"
"""The message of the commit of an edit made outside Cairn (followed by ": <path>")."""
USER_EDIT = "edit by the user in $EDITOR"
"""The message of the commit of an edit made in the editor the TUI opened (": <path>")."""


class MemoryFiles:
    """Reads and writes the workspace's memory files, and nothing else.

    Args:
        root: The workspace root.
        git: The workspace's git store; every successful write is one commit.
        max_read_chars: Cap on the text one `read` returns.
        max_write_bytes: Cap on the text one `append` or `write` may carry.
        max_file_bytes: Cap on a memory file's size after a write.
        secrets: What a write holding a credential gets (`shell.secrets.detect`): "redact"
            (replaced before the file is written and committed), "block" (refused) or "off".
        scope: The memory this workspace is (`shell.scopes`), named on every write's event.
        citations: Records the hash of the project lines a written line cites in the line
            (`shell.memory.citations.stamp`); None leaves citations as written.
    """

    def __init__(
        self,
        root: Path,
        git: GitStore,
        *,
        max_read_chars: int = 12_000,
        max_write_bytes: int = 64_000,
        max_file_bytes: int = 2_000_000,
        secrets: str = secret_scan.REDACT,
        scope: str = "global",
        citations: CitationStamper | None = None,
    ) -> None:
        if secrets not in secret_scan.POLICIES:
            raise ValueError(f"secrets must be one of {', '.join(secret_scan.POLICIES)}")
        self.secrets = secrets
        self.scope = scope
        self.root = Path(root).resolve()
        self.git = git
        self.max_read_chars = max_read_chars
        self.max_write_bytes = max_write_bytes
        self.max_file_bytes = max_file_bytes
        self.citations = citations
        self._thread_lock = threading.Lock()
        self._fingerprints = SeenFiles[str]()
        """What the model last read or wrote of each file (memory_write's staleness check)."""
        self._written: dict[str, str] = {}
        """What Cairn last wrote of each file: on disk but not committed (a failed commit),
        that content is Cairn's own, not an edit made outside it."""
        self._journal = WriteJournal(self.root)
        """The same across a restart: what a kill left uncommitted (`commits.recover`)."""

    # --- paths -----------------------------------------------------------------------------

    def resolve(self, rel: str) -> Path:
        """Validate `rel` and return the memory file's real absolute path.

        Raises:
            MemoryPathError: `rel` is not a memory file (the message says which rule failed).
        """
        return locate(self.root, rel)[0]

    def normalize(self, rel: str) -> str:
        """The canonical workspace-relative name of a memory path (e.g. `memory/x.md`)."""
        return locate(self.root, rel)[1]

    # --- reads -----------------------------------------------------------------------------

    def read(self, rel: str, from_line: int = 1, lines: int = 120) -> ReadResult:
        """Read up to `lines` lines from 1-based `from_line`, capped at `max_read_chars`.

        A missing file reads as empty text. What was read is fingerprinted, so a later
        `write` can tell whether the file changed on disk in between.
        """
        if from_line < 1 or lines < 1:
            raise ToolError("from must be ≥ 1 and lines must be ≥ 1")
        path, name = locate(self.root, rel)
        data = read_or_empty(path, name)
        self._fingerprints.record(name, data)
        text = data.decode("utf-8", errors="replace")
        found = window(text, from_line, lines, self.max_read_chars)
        return ReadResult(
            path=name,
            text=found.text,
            from_line=from_line,
            lines=found.lines,
            total_lines=found.total_lines,
            next_from=found.next_from,
            truncated=found.cut_short,
        )

    # --- writes ----------------------------------------------------------------------------

    def append(self, rel: str, text: str, *, reason: WriteReason, origin: str = "") -> WriteOutcome:
        """Append the lines of `text` that the file does not hold yet.

        Lines are compared stripped; blank lines never count as new. When nothing new
        remains, nothing is written or committed (`lines_added=0`).

        Raises:
            MemoryPathError: `rel` is not a memory file.
            MemoryWriteError: the text or the resulting file is too large.
        """
        check_reason(reason)
        path, name = locate(self.root, rel)
        check_write_size(text, self.max_write_bytes)
        text, forgotten = without_forgotten(self.root, text)
        text, redaction = policed(without_secrets, self.secrets, name, text)
        text, unhashed = stamped(self.citations, "", text)
        outside: MemoryWritten | None = None
        with self._exclusive():
            for _ in range(3):  # an editor that saves between our read and our write: again
                before = read_or_empty(path, name)
                existing = {
                    line.strip()
                    for line in split_lines(before.decode("utf-8", errors="replace"))
                    if line.strip()
                }
                fresh, skipped = new_lines(text, existing)
                if not fresh:
                    event = MemoryWritten(
                        path=name,
                        bytes=0,
                        commit=None,
                        reason=reason,
                        lines_skipped=skipped,
                        lines_forgotten=forgotten,
                        scope=self.scope,
                        citations_unhashed=unhashed,
                    )
                    return WriteOutcome(event=event, lock_cleared=None, redaction=redaction)
                separator = b"" if not before or before.endswith(b"\n") else b"\n"
                payload = separator + ("\n".join(fresh) + "\n").encode("utf-8")
                check_file_size(name, len(before) + len(payload), self.max_file_bytes)
                outside = self._commit_outside_edit(name, before) or outside
                added = sum(1 for line in fresh if line.strip())
                summary = f"append {counted(added, 'line')} to {name}"
                message = commit_message(reason, summary, origin)
                self._journal.begin({name: before + payload}, message)
                if replace_if_unchanged(path, before, before + payload):
                    break
            else:
                raise MemoryWriteError(f"{name} keeps changing on disk; try again in a moment")
            self._written[name] = digest(before + payload)
            self._fingerprints.renew(name, before, before + payload)
            outcome = self._commit([name], message)
        event = MemoryWritten(
            path=name,
            bytes=len(payload),
            commit=outcome.sha,
            reason=reason,
            lines_added=added,
            lines_skipped=skipped,
            commit_error=outcome.error,
            lines_forgotten=forgotten,
            scope=self.scope,
            citations_unhashed=unhashed,
        )
        return WriteOutcome(event, outcome.lock_cleared, redaction, outside)

    def write(
        self, rel: str, content: str, *, reason: WriteReason, origin: str = ""
    ) -> WriteOutcome:
        """Replace a memory file's content; an existing file must have been `read` first.

        Raises:
            MemoryPathError: `rel` is not a memory file.
            MemoryWriteError: the file was never read, changed on disk since it was read,
                or the content is too large.
        """
        check_reason(reason)
        path, name = locate(self.root, rel)
        check_write_size(content, self.max_write_bytes)
        content, forgotten = without_forgotten(self.root, content)
        content, redaction = policed(without_secrets, self.secrets, name, content)
        held = read_or_empty(path, name).decode("utf-8", errors="replace")
        content, unhashed = stamped(self.citations, held, content)
        if content and not content.endswith("\n"):
            content += "\n"
        data = content.encode("utf-8")
        check_file_size(name, len(data), self.max_file_bytes)
        with self._exclusive():
            exists = path.exists()
            before = read_or_empty(path, name)
            match self._fingerprints.staleness(name, before) if exists else None:
                case "unread":
                    raise MemoryWriteError(
                        f"{name} exists and has not been read; memory_get it first, "
                        "then write the whole new content"
                    )
                case "changed":
                    raise MemoryWriteError(
                        f"{name} changed on disk since you read it; memory_get it again first"
                    )
            outside = self._commit_outside_edit(name, before)
            verb = "rewrite" if exists else "create"
            message = commit_message(reason, f"{verb} {name}", origin)
            self._journal.begin({name: data}, message)
            if (not exists or data != before) and not replace_if_unchanged(path, before, data):
                raise MemoryWriteError(
                    f"{name} changed on disk while it was being written; memory_get it again"
                )
            self._fingerprints.record(name, data)
            self._written[name] = digest(data)
            outcome = self._commit([name], message)
        written = written_event(name, before, data, reason, outcome, self.scope, unhashed)
        return WriteOutcome(
            replace(written, lines_forgotten=forgotten), outcome.lock_cleared, redaction, outside
        )

    def text(self, rel: str) -> str:
        """A memory file's whole text ("" when missing), or DREAMS.md's: for whoever edits it
        with `rewrite` (dreaming), not for the model, whose reads are bounded (`read`)."""
        path, name = self._locate(rel, diary=True)
        return read_or_empty(path, name).decode("utf-8", errors="replace")

    def rewrite(
        self, edits: list[Edit], *, reason: WriteReason, summary: str, origin: str = ""
    ) -> list[WriteOutcome]:
        """Apply whole-file edits in one commit; DREAMS.md may be among them for dreaming.

        Every file must still hold its `before` (an editor may have saved meanwhile), else
        nothing is written: one that changes during the writes undoes the others. Credentials
        on the lines an edit adds are redacted (or the edit is refused) as for any write.

        Raises:
            MemoryPathError: a path is not a memory file (nor DREAMS.md for dreaming).
            MemoryWriteError: a file changed since it was read, or is too large.
        """
        check_reason(reason)
        located = [(*self._locate(e.path, diary=reason == "dream"), e) for e in edits]
        prepared: list[tuple[Path, str, bytes, bytes, SecretsRedacted | None]] = []
        tombstones = load_or_none(self.root)
        for path, name, edit in located:
            after, _ = drop_forgotten(edit.after, tombstones)
            after, redaction = policed(without_new_secrets, self.secrets, name, edit.before, after)
            if name != DIARY_FILE:  # dreaming's: a hash a line brings from its note stays
                after = stamped(self.citations, edit.before, after, keep_recorded=True)[0]
            data = after.encode("utf-8")
            check_file_size(name, len(data), self.max_file_bytes)
            prepared.append((path, name, edit.before.encode("utf-8"), data, redaction))
        with self._exclusive():
            for path, name, before, _, _ in prepared:
                if read_or_empty(path, name) != before:
                    raise MemoryWriteError(f"{name} changed on disk since it was read; try again")
            outside = {
                name: self._commit_outside_edit(name, before) for _, name, before, _, _ in prepared
            }
            message = commit_message(reason, summary, origin)
            self._journal.begin({name: data for _, name, _, data, _ in prepared}, message)
            replace_all([(path, name, before, data) for path, name, before, data, _ in prepared])
            for _, name, _, data, _ in prepared:
                self._fingerprints.forget(name)  # the model must read it again to rewrite it
                self._written[name] = digest(data)
            names = [name for _, name, _, _, _ in prepared]
            outcome = self._commit(names, message)
        return [
            WriteOutcome(
                written_event(name, before, data, reason, outcome, self.scope),
                outcome.lock_cleared if index == 0 else None,
                redaction,
                outside[name],
            )
            for index, (_, name, before, data, redaction) in enumerate(prepared)
        ]

    def commit_outside_edits(self, paths: Iterable[str]) -> list[MemoryWritten]:
        """Commit, each on its own, the memory files among `paths` (workspace-relative) that an
        edit made outside Cairn left uncommitted: once the edit settles (the file watcher calls
        this), so that no later Cairn commit carries it. Paths that are no memory file are
        skipped."""
        events = []
        with self._exclusive():
            for rel in sorted(paths):
                try:
                    path, name = locate(self.root, rel)
                except MemoryPathError:
                    continue
                if event := self._commit_outside_edit(name, read_or_empty(path, name)):
                    events.append(event)
        return events

    def commit_user_edit(self, rel: str) -> MemoryWritten | None:
        """Commit a memory file (DREAMS.md too) that a person saved in the editor the TUI
        opened, as "edit by the user in $EDITOR: <name>"; None when git already holds it.

        Raises:
            MemoryPathError: `rel` is not a memory file.
        """
        with self._exclusive():
            path, name = self._locate(rel, diary=True)
            return self._commit_outside_edit(name, read_or_empty(path, name), USER_EDIT)

    # --- internals -------------------------------------------------------------------------

    def _commit(self, names: list[str], message: str) -> CommitOutcome:
        """Commit Cairn's write of `names`; committed, the journal forgets it."""
        outcome = self.git.commit(names, message)
        if outcome.error is None:
            self._journal.end(names)
        return outcome

    def _commit_outside_edit(
        self, name: str, current: bytes, subject: str = OUTSIDE_EDIT
    ) -> MemoryWritten | None:
        """Commit `current`, the file's content on disk, when git does not hold it and Cairn
        did not write it: an edit made outside Cairn, as "<subject>: <name>"."""
        committed = self.git.committed(name)
        if current == (committed or b"") or self._written.get(name) == digest(current):
            return None
        outcome = self.git.commit([name], f"{subject}: {name}\n")
        if outcome.sha is None and outcome.error is None:
            return None  # nothing to commit after all (an ignored or vanished file)
        added, removed = changed_lines(committed or b"", current)
        return MemoryWritten(
            path=name,
            bytes=len(current),
            commit=outcome.sha,
            reason="user",
            lines_added=added,
            lines_removed=removed,
            commit_error=outcome.error,
            outside_edit=subject == OUTSIDE_EDIT,
            scope=self.scope,
        )

    def _locate(self, rel: str, *, diary: bool) -> tuple[Path, str]:
        """`locate`, and DREAMS.md when `diary` (dreaming's own file, never the model's)."""
        if diary and rel.strip() == DIARY_FILE:
            path = self.root / DIARY_FILE
            if path.is_symlink() or (path.exists() and not path.is_file()):
                raise MemoryPathError(f"{DIARY_FILE} is not a regular file")
            return path, DIARY_FILE
        return locate(self.root, rel)

    @contextlib.contextmanager
    def _exclusive(self) -> Iterator[None]:
        """Hold the in-process lock and the cross-process `flock` together."""
        with self._thread_lock, exclusive_lock(self.root / MEMORY_LOCK):
            yield

"""The warning a file gets when an edit made outside Cairn committed it and it is not plain
Markdown text: a `.bin` under `memory/` (the sync commits every file there), a note with a NUL
byte or bytes that are not UTF-8 (the memory door commits those). It is committed all the
same, and said: the push scan reads its bytes (`shell.secrets.push_scan`), but the index does
not, and nothing compressed or encrypted in it can be scanned."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from shell.events import Event, MemoryWritten, Notice
from shell.secrets.blobs import not_text


def not_text_notices(root: Path, names: Iterable[str]) -> list[Notice]:
    """A warning for each of `names` (workspace-relative, just committed as edited outside
    Cairn) that is not plain Markdown text."""
    notices = []
    for name in names:
        try:
            data = (root / name).read_bytes()
        except OSError:
            continue  # deleted: nothing of it is committed
        if reason := not_text(name, data):
            notices.append(
                Notice(
                    f"{name} was committed as an edit made outside Cairn, but {reason}: its "
                    "bytes are scanned for secrets before any push, yet it is not indexed, "
                    "and nothing compressed or encrypted in it can be scanned",
                    "warning",
                )
            )
    return notices


def outside_edit_notices(root: Path, events: Iterable[Event | None]) -> list[Notice]:
    """`not_text_notices` for the files among `events` committed as edits made outside Cairn."""
    names = [
        event.path
        for event in events
        if isinstance(event, MemoryWritten) and event.outside_edit and event.commit
    ]
    return not_text_notices(root, names)

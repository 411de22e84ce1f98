"""MEMORY.md and today's note as MCP resources, so that a client can show them.

A resource's URI is `cairn://memory/<memory path>`; any memory file may be read that way (the
memory door's confinement, `shell.memory.paths.locate`, decides which paths are memory), but
only MEMORY.md and today's note are listed. A file is read whole, up to `MAX_RESOURCE_BYTES`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from shell.memory.files.swap import read_or_empty
from shell.memory.paths import CURATED_FILE, MemoryPathError, daily_note, locate

SCHEME = "cairn://memory/"
MAX_RESOURCE_BYTES = 1_000_000
MIME = "text/markdown"


@dataclass(frozen=True)
class Listed:
    uri: str
    name: str
    description: str


def listed(today: str) -> list[Listed]:
    """MEMORY.md and the note of `today` (YYYY-MM-DD)."""
    note = daily_note(today)
    return [
        Listed(
            SCHEME + CURATED_FILE,
            CURATED_FILE,
            "The user's curated long-term memory: durable facts, preferences, decisions.",
        ),
        Listed(SCHEME + note, note, f"Today's daily note ({today}): what was saved today."),
    ]


def read(root: Path, uri: str) -> str:
    """The text of the memory file `uri` names ("" when it does not exist yet).

    Raises:
        MemoryPathError: `uri` names no memory file.
    """
    if not uri.startswith(SCHEME):
        raise MemoryPathError(f"not a memory resource: {uri[:200]!r} (they are {SCHEME}<path>)")
    path, name = locate(root, uri.removeprefix(SCHEME))
    data = read_or_empty(path, name)
    text = data[:MAX_RESOURCE_BYTES].decode("utf-8", errors="replace")
    if len(data) > MAX_RESOURCE_BYTES:
        text += (
            f"\n[cut at {MAX_RESOURCE_BYTES:,} bytes of {len(data):,}: read on with memory_get]\n"
        )
    return text

"""What a writer last saw of each file, so that a write never clobbers what it has not seen.

The memory door (`memory_write`) and the project tools (`edit_file`, `write_file`) both refuse
to replace a file that was never read, or that changed since it was read (an editor, a
formatter, a command); each says so in its own words.
"""

from __future__ import annotations

import hashlib
from typing import Generic, Literal, TypeVar

Staleness = Literal["unread", "changed"]
"""Why a write must read the file first."""

Key = TypeVar("Key")


def digest(data: bytes) -> str:
    """The fingerprint of a file's whole bytes."""
    return hashlib.sha256(data).hexdigest()


class SeenFiles(Generic[Key]):
    """The digest of each file as it was last read or written, by whatever names a file."""

    def __init__(self) -> None:
        self._digests: dict[Key, str] = {}

    def record(self, key: Key, data: bytes) -> None:
        self._digests[key] = digest(data)

    def forget(self, key: Key) -> None:
        """The file must be read again before it may be replaced."""
        self._digests.pop(key, None)

    def staleness(self, key: Key, current: bytes) -> Staleness | None:
        """None when `current` is what was last seen; else why it is not."""
        seen = self._digests.get(key)
        if seen is None:
            return "unread"
        return None if seen == digest(current) else "changed"

    def renew(self, key: Key, before: bytes, after: bytes) -> None:
        """`after` is seen when `before` was: what a write added to a file seen as it was."""
        if self._digests.get(key) == digest(before):
            self.record(key, after)

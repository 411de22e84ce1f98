"""What the model has read of each project file, so a write never clobbers what it has not seen.

`read_file` records the sha256 of a file's whole bytes; `edit_file` and `write_file` compare it
with the bytes on disk and refuse when the file was never read, or changed since (an editor, a
formatter, a command). A write records what it wrote, so consecutive edits need no new read.
"""

from __future__ import annotations

from pathlib import Path

from shell.seen import SeenFiles
from shell.tools.toolbox import ToolError


class ReadLedger(SeenFiles[Path]):
    """The hash of each project file as the model last read or wrote it, by real path."""

    def check(self, path: Path, current: bytes, shown: str) -> None:
        """Refuse a write over `current` unless it is what the model last read.

        Raises:
            ToolError: the file was never read, or changed since.
        """
        match self.staleness(path, current):
            case "unread":
                raise ToolError(
                    f"{shown} exists and has not been read in this session: read it first with "
                    "read_file, then edit it"
                )
            case "changed":
                raise ToolError(
                    f"{shown} changed since you read it; read it again with read_file before "
                    "editing it"
                )

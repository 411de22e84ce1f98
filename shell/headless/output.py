"""Where the headless commands print: a text stream, made printable on its way to the terminal."""

from __future__ import annotations

from typing import Protocol

from shell.text.printable import printable


class Out(Protocol):
    """What a command prints to: `sys.stdout` behind `Printable`, a `StringIO` in a test."""

    def write(self, text: str, /) -> int: ...

    def flush(self) -> None: ...


class Printable:
    """`stream`, every write through `shell.text.printable`: the one place where the headless
    commands reach the terminal, so none prints a memory's, a tool's, an MCP server's or git's
    escape sequences. A `--json` line passes unchanged (JSON escapes every control the filter
    removes; what it leaves raw is written as JSON would escape it)."""

    def __init__(self, stream: Out) -> None:
        self.stream = stream

    def write(self, text: str, /) -> int:
        self.stream.write(printable(text))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

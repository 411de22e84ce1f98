"""The `cairn` command line: the front door for the TUI and the headless core."""

from __future__ import annotations


def main() -> None:
    raise SystemExit("cairn: not built yet")

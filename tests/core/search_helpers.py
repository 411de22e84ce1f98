"""Helpers for the memory_search tests: a fixed clock time, notes written into a workspace, and
the paths of a result's hits."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from shell.memory.search.pipeline import SearchResult

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def write_notes(workspace: Path, notes: dict[str, str]) -> None:
    for relative, text in notes.items():
        path = workspace / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def paths(result: SearchResult) -> list[str]:
    return [hit.path for hit in result.hits]

"""Modules stay small: every Python file of the project is split before it passes 400 lines."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("shell", "widgets", "themes", "bench", "tests")
MAX_LINES = 400

EXCEPTIONS: dict[str, str] = {}
"""Files allowed past the limit, each with the reason it is better whole."""


def _modules() -> list[Path]:
    return sorted(path for folder in FOLDERS for path in (ROOT / folder).rglob("*.py"))


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_every_module_stays_under_the_limit() -> None:
    modules = _modules()
    assert len(modules) > 100  # the folders were found
    too_long = {
        name: lines
        for path in modules
        if (name := path.relative_to(ROOT).as_posix()) not in EXCEPTIONS
        and (lines := _lines(path)) > MAX_LINES
    }
    assert not too_long, (
        f"over {MAX_LINES} lines: {too_long}; split each by job, or write in EXCEPTIONS why it "
        "is better whole"
    )


def test_every_exception_still_needs_to_be_one() -> None:
    stale = [name for name in EXCEPTIONS if _lines(ROOT / name) <= MAX_LINES]
    assert not stale, f"under the limit again, remove from EXCEPTIONS: {stale}"

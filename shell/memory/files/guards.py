"""What every write through the door is checked for first: a known reason, its size and the
file's after it, the lines forgotten (`cairn forget`'s tombstones), and the secrets policy,
whose refusal is the door's own error."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import ParamSpec, TypeVar

from shell.memory.files.values import MemoryWriteError
from shell.memory.forget.tombstones import drop_forgotten, load_or_none
from shell.secrets.policy import SecretBlocked

REASONS = frozenset({"tool", "flush", "dream", "user", "mcp"})
FORGOTTEN = (
    "not written: the line was forgotten (`cairn forget`, its tombstone is in "
    ".cairn-forgotten), and a forgotten line is never written back"
)

_P = ParamSpec("_P")
_R = TypeVar("_R")


def check_reason(reason: str) -> None:
    if reason not in REASONS:
        raise ValueError(f"unknown write reason {reason!r}; one of {sorted(REASONS)}")


def policed(apply: Callable[_P, _R], *args: _P.args, **kwargs: _P.kwargs) -> _R:
    """The secrets policy applied to a write; a blocked credential refuses the write."""
    try:
        return apply(*args, **kwargs)
    except SecretBlocked as blocked:
        raise MemoryWriteError(str(blocked)) from None


def check_write_size(text: str, limit: int) -> None:
    size = len(text.encode("utf-8"))
    if size > limit:
        raise MemoryWriteError(
            f"text is {size} bytes; one memory write may carry at most {limit} bytes"
        )


def check_file_size(name: str, size: int, limit: int) -> None:
    if size > limit:
        raise MemoryWriteError(
            f"{name} would grow to {size} bytes; memory files are capped at {limit} bytes "
            "(start a new file under memory/)"
        )


def without_forgotten(root: Path, text: str) -> tuple[str, int]:
    """`text` without the lines that hold a forgotten one, and how many went; a write that held
    nothing else is refused."""
    text, forgotten = drop_forgotten(text, load_or_none(root))
    if forgotten and not text.strip():
        raise MemoryWriteError(FORGOTTEN)
    return text, forgotten

"""What every write through the door is checked for first: a known reason, and the secrets
policy, whose refusal is the door's own error."""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec, TypeVar

from shell.memory.files.values import MemoryWriteError
from shell.secrets.policy import SecretBlocked

REASONS = frozenset({"tool", "flush", "dream", "user", "mcp"})

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

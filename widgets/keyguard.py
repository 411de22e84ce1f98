"""The guard that keeps keys typed for the prompt from answering an approval."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import ClassVar

GUARD_S = 0.6
"""How long after an approval appeared, the modal opened, or a key was typed in the prompt
before a key may answer it."""


class KeyGuard:
    """Whether keys may answer an approval yet: `seconds` after whatever happened last."""

    SECONDS: ClassVar[float] = GUARD_S
    """Tests set it to 0 where the guard is not what they test."""

    def __init__(
        self, seconds: float | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.seconds = self.SECONDS if seconds is None else seconds
        self.clock = clock
        self._since = clock() - self.seconds  # open until something happens

    def touch(self) -> None:
        """Something the next keys may belong to happened: the guard starts again."""
        self._since = self.clock()

    def remaining(self) -> float:
        return max(0.0, self.seconds - (self.clock() - self._since))

    @property
    def open(self) -> bool:
        return self.remaining() <= 0.0

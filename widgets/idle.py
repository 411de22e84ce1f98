"""When the TUI has been idle long enough to dream (`[dreaming] idle_minutes` without a key or
a turn) or to collect its garbage whole (`widgets.collector`), each once per idle spell."""

from __future__ import annotations

import time
from collections.abc import Callable


class IdleSpell:
    """The time since the last key or turn, and whether this spell has dreamt (or collected)
    already."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._last = clock()
        self._dreamt = False
        self._reclaimed = False

    def active(self) -> None:
        """A key or a turn: a new spell begins."""
        self._last = self.clock()
        self._dreamt = self._reclaimed = False

    def ended(self) -> None:
        """A turn or a sweep ended: the idle time counts from now (the spell goes on)."""
        self._last = self.clock()

    def dream_due(self, idle_minutes: float, *, busy: bool) -> bool:
        """Whether to sweep now (then this spell has dreamt): never during a turn."""
        if busy or self._dreamt or self.clock() - self._last < idle_minutes * 60:
            return False
        self._dreamt = True
        return True

    def reclaim_due(self, idle_s: float, *, busy: bool) -> bool:
        """Whether to collect everything now (then this spell has): never during a turn."""
        if busy or self._reclaimed or self.clock() - self._last < idle_s:
            return False
        self._reclaimed = True
        return True

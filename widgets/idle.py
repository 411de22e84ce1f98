"""When the TUI has been idle long enough to dream (`[dreaming] idle_minutes` without a key or
a turn) or to collect its garbage whole (`widgets.collector`), each once per idle spell."""

from __future__ import annotations

import time
from collections.abc import Callable


class IdleSpell:
    """The time since the last key or turn, and what this spell has done already (dreamt,
    collected)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._last = clock()
        self._done: set[str] = set()

    def active(self) -> None:
        """A key or a turn: a new spell begins."""
        self._last = self.clock()
        self._done.clear()

    def ended(self) -> None:
        """A turn or a sweep ended: the idle time counts from now (the spell goes on)."""
        self._last = self.clock()

    def dream_due(self, idle_minutes: float, *, busy: bool) -> bool:
        """Whether to sweep now (then this spell has dreamt): never during a turn."""
        return self._once("dream", idle_minutes * 60, busy=busy)

    def reclaim_due(self, idle_s: float, *, busy: bool) -> bool:
        """Whether to collect everything now (then this spell has): never during a turn."""
        return self._once("reclaim", idle_s, busy=busy)

    def _once(self, what: str, idle_s: float, *, busy: bool) -> bool:
        if busy or what in self._done or self.clock() - self._last < idle_s:
            return False
        self._done.add(what)
        return True

"""The cyclic garbage collector kept off what a long session has already shown.

A full collection walks every object alive: with the core's libraries and a 200-turn transcript
that is 0.2–0.6 s in which nothing paints, at a moment no one chose (on a theme switch, seven
switches took 87–289 ms with it, 89–108 ms without; a key typed waits as long). What has lived
through a turn mostly lives on, so at the end of each (a quiet moment) the young generations
are collected and what survives is frozen (`gc.freeze`): later collections walk only what came
since. What was frozen and then let go (a cleared transcript, a closed screen) is reclaimed in
an idle spell: everything unfrozen, collected once, frozen again.
"""

from __future__ import annotations

import gc

RECLAIM_IDLE_S = 300.0
"""Idle this long (no key, no turn), the frozen objects are collected once."""


def settle() -> None:
    """A turn ended: what survives it is frozen (collect the young first, so no garbage is)."""
    gc.collect(1)
    gc.freeze()


def reclaim() -> None:
    """Collect everything once (what was frozen and let go since), then freeze what lives."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def release() -> None:
    """The app closes: what it froze goes back to the collector (a process may run another)."""
    gc.unfreeze()

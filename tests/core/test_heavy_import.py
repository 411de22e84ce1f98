"""The collector pause around heavy imports: nested, overlapping, and restoring what was."""

from __future__ import annotations

import gc

from shell.heavy_import import collector_paused


def test_the_collector_comes_back_when_the_last_pause_ends_with_what_exists_frozen() -> None:
    assert gc.isenabled()
    frozen_before = gc.get_freeze_count()

    with collector_paused():
        with collector_paused():  # another import, in another thread, overlapping
            assert not gc.isenabled()
        assert not gc.isenabled(), "an inner pause ending must not restart the collector"
        built = [[] for _ in range(1000)]  # the stand-in for what an import builds

    assert gc.isenabled()
    assert gc.get_freeze_count() >= frozen_before + len(built)


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()

"""The collector is kept off what a session has shown (`widgets.collector`): what lives through
a turn is frozen, given back in an idle spell, and released when the app closes."""

from __future__ import annotations

import gc
import weakref

from tests.ui.conftest import MakeApp, send, started
from tests.ui.pilot_helpers import SIZE, TOLD
from widgets import collector
from widgets.idle import IdleSpell


class Cycle:
    """Garbage only the cyclic collector can find."""

    def __init__(self) -> None:
        self.me = self


def test_what_settled_is_skipped_by_collections_until_an_idle_spell_reclaims_it() -> None:
    try:
        cycle = Cycle()
        kept = weakref.ref(cycle)
        collector.settle()
        del cycle
        gc.collect()
        assert kept() is not None, "frozen: a full collection does not walk it"
        collector.reclaim()
        assert kept() is None
        assert gc.get_freeze_count() > 0, "what still lives is frozen again"
    finally:
        collector.release()
    assert gc.get_freeze_count() == 0


def test_an_idle_spell_reclaims_once_and_never_during_a_turn() -> None:
    now = [0.0]
    spell = IdleSpell(lambda: now[0])
    assert not spell.reclaim_due(300, busy=False)
    now[0] = 301
    assert not spell.reclaim_due(300, busy=True)
    assert spell.reclaim_due(300, busy=False)
    now[0] = 1000
    assert not spell.reclaim_due(300, busy=False), "once per spell"
    spell.active()  # a key: a new spell
    now[0] = 1301
    assert spell.reclaim_due(300, busy=False)


async def test_a_turn_ended_freezes_what_lives_and_closing_the_app_releases_it(
    demo_app: MakeApp,
) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        gc.unfreeze()
        await send(app, pilot, TOLD)
        await pilot.pause()
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0

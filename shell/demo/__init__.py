"""Cairn's offline demo brain: a deterministic stand-in for a model, served through litellm.

It needs no API key and no network. Its modules import one way, each only those below it:
`provider` (the litellm custom provider) → `rules` (what to say or call for one model call) →
`facts` (what a user message states) → `summary` (compaction summaries, by the core's
`shell.lifecycle.rule_summary`) → `messages` (reading the call, planning the reply). The model
caller does not know it exists: the composition root calls `register()`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date

from shell.config import DEMO_MODEL

PROVIDER = DEMO_MODEL.split("/", 1)[0]


def register(today: Callable[[], date] | None = None) -> None:
    """Serve `cairn-demo/…` models with the demo brain (litellm is imported only when used).

    Args:
        today: The injected clock's date, for when the system prompt states none.
    """
    from shell.demo.provider import demo_brain
    from shell.model.loader import register_provider

    register_provider(PROVIDER, lambda: demo_brain(today))

"""The one ContextBudget every threshold comes from, and the one holder of it for a session.

The meter, the flush gate, compaction and overflow recovery all read the same ContextBudget,
so they can never disagree about how full the context is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from shell.config import DEMO_CONTEXT_WINDOW, MIN_CONTEXT_WINDOW, Settings
from shell.events import Notice, WindowSource

UNKNOWN_WINDOW = 128_000
"""Assumed for a model whose window nobody knows (and said, with how to set it)."""


@dataclass(frozen=True)
class ContextBudget:
    """Every context threshold, derived from the window by one rule that scales from a 4k local
    model to a 1M one:

    - reserve (kept free for the reply) = min(reserve_cap, window // 4). OpenClaw keeps at least
      20k, but never so much that the prompt gets less than min(8k, window/2); a quarter of the
      window capped at 20k honours both and stays sane at 4k.
    - compaction threshold = window - reserve.
    - soft margin (flush fires this far below compaction) = min(soft_cap, compaction // 8).
    - flush threshold = compaction threshold - soft margin.
    - verbatim tail kept by compaction = min(tail_cap, compaction * 3 // 10), so that after a
      compaction the prompt lands well below the flush threshold again.
    """

    window: int
    reserve_cap: int = 20_000
    soft_cap: int = 4_000
    tail_cap: int = 20_000
    window_source: WindowSource = "config"

    def __post_init__(self) -> None:
        if self.window < MIN_CONTEXT_WINDOW:
            raise ValueError(
                f"context window {self.window} is below the minimum {MIN_CONTEXT_WINDOW}"
            )

    @property
    def reserve(self) -> int:
        return min(self.reserve_cap, self.window // 4)

    @property
    def compaction_threshold(self) -> int:
        return self.window - self.reserve

    @property
    def soft_margin(self) -> int:
        return min(self.soft_cap, self.compaction_threshold // 8)

    @property
    def flush_threshold(self) -> int:
        return self.compaction_threshold - self.soft_margin

    @property
    def keep_tail(self) -> int:
        return min(self.tail_cap, self.compaction_threshold * 3 // 10)

    def over_compaction(self, tokens: int) -> bool:
        return tokens >= self.compaction_threshold


def configured_budget(settings: Settings) -> ContextBudget:
    """The configured window's budget; the demo's window, or a placeholder the agent resolves
    at start (`ContextWindow.resolve`), when none is configured."""
    return ContextBudget(
        settings.context_window or DEMO_CONTEXT_WINDOW,
        reserve_cap=settings.reserve_tokens,
        soft_cap=settings.soft_margin_tokens,
        tail_cap=settings.keep_tail_tokens,
        window_source="config" if settings.context_window else "demo",
    )


class ContextWindow:
    """The session's one ContextBudget, behind one holder: the request builder sizes the prompt
    to it, the lifecycle decides against it, and the agent resolves it once the model's window
    is known (at start, when no window was configured)."""

    def __init__(self, budget: ContextBudget, *, resolved: bool) -> None:
        self.budget = budget
        self.resolved = resolved

    def resolve(self, window: int, source: WindowSource) -> None:
        self.budget = replace(self.budget, window=window, window_source=source)
        self.resolved = True

    def look_up(
        self, lookup: Callable[[], tuple[int | None, WindowSource | str]], model: str
    ) -> Notice | None:
        """Resolve the window from `lookup` (litellm's model info; blocking); an unknown one is
        assumed to be `UNKNOWN_WINDOW`, and the notice says so."""
        window, source = lookup()
        if window and source in ("config", "demo", "model_info"):
            self.resolve(window, source)
            return None
        self.resolve(UNKNOWN_WINDOW, "assumed")
        return Notice(
            f"Context window of {model} is unknown; assuming {UNKNOWN_WINDOW:,} tokens. "
            "Set --context-window to be exact.",
            level="warning",
        )


def configured_window(settings: Settings) -> ContextWindow:
    """A session's window before it starts: resolved when configured or the demo's, else the
    placeholder of `configured_budget` until `ContextWindow.look_up` asks the model."""
    resolved = bool(settings.context_window) or settings.demo
    return ContextWindow(configured_budget(settings), resolved=resolved)

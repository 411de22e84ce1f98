"""What each model call sends, and what it costs in tokens.

The system prompt is: who Cairn is, the memory rules, today's date, the bootstrap files
(AGENTS → SOUL → MEMORY within budget), then — when they apply — the AGENTS.md sections
re-injected after a compaction and the startup prelude of a new session.

Sizes follow the context window (`size_to`): below `COMPACT_TOOLS_BELOW` the tool schemas go
in their compact form, and the bootstrap takes at most a quarter of the window. Counts are
calibrated by the provider (`calibrate`): what it reported for the last call is the truth for
what was sent, our own count only measures what was added since.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shell import prompts
from shell.config import Settings
from shell.context import ContextBudget, TokenCounter
from shell.events import UsageUpdated
from shell.tools import Toolbox
from shell.workspace import BOOTSTRAP_FILES, Bootstrap, bootstrap_budgets, load_bootstrap

CALIBRATION_RANGE = (0.25, 4.0)
"""Reported ÷ counted prompt tokens a provider's report may have to be believed. Measured:
SmolLM2 on llama-cpp-python reports 0.32–0.53 of our (o200k) count (its tokenizer and chat
template differ); OpenAI models report within a few percent of it."""
COMPACT_TOOLS_BELOW = 16_000
"""Below this window the tool schemas are compact: 851 → 339 tokens (at 2,048 tokens the full
schemas took 42% of the window)."""


@dataclass(frozen=True)
class Calibration:
    """The provider's prompt tokens for the last call, next to our count of that prompt."""

    reported: int
    counted: int

    @property
    def offset(self) -> int:
        return self.reported - self.counted


class RequestBuilder:
    def __init__(self, settings: Settings, counter: TokenCounter, toolbox: Toolbox) -> None:
        self.settings = settings
        self.counter = counter
        self.toolbox = toolbox
        self.reinjection = ""
        """AGENTS.md sections re-injected after the last compaction (kept for the cycle)."""
        self.prelude = ""
        """Recent daily notes for the first turn of a new session."""
        self.calibration: Calibration | None = None
        """Set after each call the provider reported usage for; None after the conversation
        was replaced (a compaction, /new), when the last report no longer describes it."""
        self.compact_tools = False
        self.budgets = settings.bootstrap_max_chars, settings.bootstrap_total_max_chars
        self._bootstrap: Bootstrap | None = None
        self._bootstrap_key: tuple[object, ...] = ()

    def size_to(self, window: int) -> None:
        """Fit the tool schemas and the bootstrap budgets to a context window."""
        self.compact_tools = window < COMPACT_TOOLS_BELOW
        self.budgets = bootstrap_budgets(self.settings, window)

    @property
    def tool_schemas(self) -> list[dict[str, Any]]:
        return self.toolbox.schemas(compact=self.compact_tools)

    def bootstrap(self) -> Bootstrap:
        """The bootstrap files, re-read only when one of them or the budgets changed."""
        key = (*(_stat(self.settings.workspace / name) for name in BOOTSTRAP_FILES), self.budgets)
        if self._bootstrap is None or key != self._bootstrap_key:
            per_file, total = self.budgets
            self._bootstrap = load_bootstrap(
                self.settings.workspace, max_chars=per_file, total_max_chars=total
            )
            self._bootstrap_key = key
        return self._bootstrap

    def system_prompt(self) -> str:
        parts = [
            prompts.CAIRN_IDENTITY,
            prompts.MEMORY_RECALL,
            f"Current date: {self.settings.today()}",
            f"# Project Context\n\n{self.bootstrap().text}",
        ]
        if self.reinjection:
            parts.append(self.reinjection)
        if self.prelude:
            parts.append(self.prelude)
        return "\n\n".join(parts)

    def request(self, messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"role": "system", "content": self.system_prompt()}, *messages]

    def count(self, messages: Sequence[dict[str, Any]]) -> int:
        """Our own count of the whole prompt for `messages`: system, tool schemas, messages."""
        return self.counter.messages(self.request(messages)) + self.counter.tools(self.tool_schemas)

    def projected(self, messages: Sequence[dict[str, Any]]) -> int:
        """The prompt for `messages` as the provider will count it: what it reported for the
        last call plus our count of what was added since (our count alone until it reported)."""
        counted = self.count(messages)
        if self.calibration is None:
            return counted
        return max(0, counted + self.calibration.offset)

    def calibrate(self, reported: int, counted: int) -> None:
        """Take the provider's prompt tokens for a call whose prompt we counted at `counted`.

        A report outside `CALIBRATION_RANGE` of our count is not the whole prompt (a server
        that counts only what its prompt cache missed, or a placeholder): it is ignored.
        """
        low, high = CALIBRATION_RANGE
        if counted > 0 and low <= reported / counted <= high:
            self.calibration = Calibration(reported, counted)

    def usage(
        self,
        messages: Sequence[dict[str, Any]],
        budget: ContextBudget,
        reported: tuple[int, int] = (0, 0),
    ) -> UsageUpdated:
        system = self.counter.message({"role": "system", "content": self.system_prompt()})
        tools = self.counter.tools(self.tool_schemas)
        conversation = self.counter.messages(messages)
        counted = system + tools + conversation
        offset = self.calibration.offset if self.calibration else 0
        return UsageUpdated(
            prompt_tokens=max(0, counted + offset),
            window=budget.window,
            flush_threshold=budget.flush_threshold,
            compaction_threshold=budget.compaction_threshold,
            breakdown={"system": system, "tools": tools, "messages": conversation},
            reported_prompt_tokens=reported[0],
            completion_tokens=reported[1],
            window_source=budget.window_source,
            counted_prompt_tokens=counted,
            calibrated=self.calibration is not None,
        )


def _stat(path: Path) -> tuple[int, int]:
    try:
        info = path.stat()
    except OSError:
        return (-1, -1)
    return (info.st_mtime_ns, info.st_size)

"""What each model call sends, and what it costs in tokens.

The system prompt is: who Cairn is, the memory rules, today's date, the bootstrap files
(AGENTS → SOUL → MEMORY within budget), then — when they apply — the AGENTS.md sections
re-injected after a compaction and the startup prelude of a new session.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from shell import prompts
from shell.config import Settings
from shell.context import ContextBudget, TokenCounter
from shell.events import UsageUpdated
from shell.workspace import BOOTSTRAP_FILES, Bootstrap, load_bootstrap


class RequestBuilder:
    def __init__(
        self, settings: Settings, counter: TokenCounter, tool_schemas: Sequence[dict[str, Any]]
    ) -> None:
        self.settings = settings
        self.counter = counter
        self.tool_schemas = list(tool_schemas)
        self.reinjection = ""
        """AGENTS.md sections re-injected after the last compaction (kept for the cycle)."""
        self.prelude = ""
        """Recent daily notes for the first turn of a new session."""
        self._bootstrap: Bootstrap | None = None
        self._bootstrap_key: tuple[tuple[int, int], ...] = ()

    def bootstrap(self) -> Bootstrap:
        """The bootstrap files, re-read only when one of them changed on disk."""
        key = tuple(_stat(self.settings.workspace / name) for name in BOOTSTRAP_FILES)
        if self._bootstrap is None or key != self._bootstrap_key:
            self._bootstrap = load_bootstrap(
                self.settings.workspace,
                max_chars=self.settings.bootstrap_max_chars,
                total_max_chars=self.settings.bootstrap_total_max_chars,
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
        """Tokens of the whole prompt for `messages`: system, tool schemas and messages."""
        return self.counter.messages(self.request(messages)) + self.counter.tools(self.tool_schemas)

    def usage(
        self,
        messages: Sequence[dict[str, Any]],
        budget: ContextBudget,
        reported: tuple[int, int] = (0, 0),
    ) -> UsageUpdated:
        system = self.counter.message({"role": "system", "content": self.system_prompt()})
        tools = self.counter.tools(self.tool_schemas)
        conversation = self.counter.messages(messages)
        return UsageUpdated(
            prompt_tokens=system + tools + conversation,
            window=budget.window,
            flush_threshold=budget.flush_threshold,
            compaction_threshold=budget.compaction_threshold,
            breakdown={"system": system, "tools": tools, "messages": conversation},
            reported_prompt_tokens=reported[0],
            completion_tokens=reported[1],
            window_source=budget.window_source,
        )


def _stat(path: Path) -> tuple[int, int]:
    try:
        info = path.stat()
    except OSError:
        return (-1, -1)
    return (info.st_mtime_ns, info.st_size)

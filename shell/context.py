"""Token counting (tiktoken, offline) and the one ContextBudget every threshold comes from.

The meter, the flush gate, compaction and overflow recovery all read the same ContextBudget,
so they can never disagree about how full the context is.
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from shell.events import WindowSource

MIN_WINDOW = 512


def _litellm_tiktoken_dir() -> str | None:
    # find_spec locates litellm without importing it (the import costs ~3 s).
    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / "litellm_core_utils" / "tokenizers"
    return str(folder) if folder.is_dir() else None


@lru_cache(maxsize=4)
def _encoding(name: str) -> Any:
    if "TIKTOKEN_CACHE_DIR" not in os.environ and (folder := _litellm_tiktoken_dir()):
        os.environ["TIKTOKEN_CACHE_DIR"] = folder  # tiktoken would otherwise download
    import tiktoken

    return tiktoken.get_encoding(name)


def count_tokens(text: str, encoding: str = "o200k_base") -> int:
    return len(_encoding(encoding).encode(text, disallowed_special=()))


CONTEXT_ENCODING = "cl100k_base"
"""The context meter's tokenizer. litellm loads cl100k at import for its own counting, so the
first answer pays for one BPE instead of two (o200k: another 0.3-0.5 s of CPU at start-up). The
provider's reported usage calibrates the count (`shell.request`), so the local tokenizer only
has to measure what was added since; the index keeps o200k (`count_tokens`' default)."""

MESSAGE_OVERHEAD = 4
"""Per-message framing tokens (role, separators), as OpenAI's chat format adds."""


class TokenCounter:
    """Counts messages with a cache keyed by the message's JSON, so a long transcript is
    encoded once and each new turn costs only its own tokens."""

    def __init__(self, encoding: str = CONTEXT_ENCODING) -> None:
        self.encoding = encoding
        self._cache: dict[str, int] = {}

    def text(self, text: str) -> int:
        return count_tokens(text, self.encoding)

    def message(self, message: dict[str, Any]) -> int:
        key = json.dumps(message, sort_keys=True, ensure_ascii=False, default=str)
        if (cached := self._cache.get(key)) is None:
            body = message.get("content") or ""
            if not isinstance(body, str):
                body = json.dumps(body, ensure_ascii=False)
            cached = MESSAGE_OVERHEAD + self.text(body)
            for call in message.get("tool_calls") or ():
                function = call.get("function", {})
                cached += self.text(function.get("name", "") + (function.get("arguments") or ""))
            if len(self._cache) > 20_000:
                self._cache.clear()
            self._cache[key] = cached
        return cached

    def messages(self, messages: Sequence[dict[str, Any]]) -> int:
        return sum(self.message(m) for m in messages)

    def tools(self, schemas: Sequence[dict[str, Any]]) -> int:
        if not schemas:
            return 0
        return self.text(json.dumps(list(schemas), sort_keys=True))


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
        if self.window < MIN_WINDOW:
            raise ValueError(f"context window {self.window} is below the minimum {MIN_WINDOW}")

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

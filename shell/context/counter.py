"""The context meter's token counter: whole messages, cached, in the meter's encoding."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from shell.text.tokens import CONTEXT_ENCODING, count_tokens

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

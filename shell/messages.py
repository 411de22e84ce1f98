"""Reading chat messages as litellm and providers hand them over: dicts or objects.

One place for the two questions every reader of a transcript asks (what is this field, what is
this message's text), shared by compaction, the token counter, the model caller and the demo.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from shell import prompts


def field(item: Any, key: str) -> Any:
    """`item[key]` for a mapping, `item.key` for an object, None when absent."""
    if isinstance(item, Mapping):
        return item.get(key)
    return getattr(item, key, None)


def content_text(content: Any) -> str:
    """Message content as plain text: a string as is; OpenAI content parts (dicts, objects or
    strings) joined by newlines; anything else as JSON."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list | tuple):
        texts = [
            part
            if isinstance(part, str)
            else part.get("text")
            if isinstance(part, dict)
            else getattr(part, "text", None)
            for part in content
        ]
        return "\n".join(text for text in texts if isinstance(text, str) and text)
    return json.dumps(content, ensure_ascii=False, default=str)


def message_text(message: Any) -> str:
    """A message's content as plain text."""
    return content_text(field(message, "content"))


# --- the compaction summary as a message ----------------------------------------------------


def summary_message(summary: str) -> dict[str, Any]:
    """The user-role message that stands for everything a compaction summarised."""
    return {"role": "user", "content": f"{prompts.COMPACTED_PREFIX}\n\n{summary}"}


def is_summary_message(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return (
        message.get("role") == "user"
        and isinstance(content, str)
        and content.startswith(prompts.COMPACTED_PREFIX)
    )


def summary_text(message: dict[str, Any]) -> str:
    """The summary inside a summary message."""
    return str(message["content"])[len(prompts.COMPACTED_PREFIX) :].strip()

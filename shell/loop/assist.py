"""Memory help for a model that does not use its tools: Cairn makes two calls itself.

Small local models (Qwen2.5-Coder-1.5B on a 4,096 window, measured in `bench/real_server`)
answer "please remember that …" with "I'll keep you posted" and no write, and answer a
question about what was said from nothing. Two rules, on by `memory_assist` ("auto": for a
local `api_base`, as `text_tool_calls`; `shell.model.textcalls.assists`):

- **A question is searched before the model answers:** `memory_search` runs on it, and the
  call and its result enter the conversation as if the model had made them. With the result
  the 1.5B model answered a stored date 2 times of 4, without it never.
- **What the user asks to remember, or tells as a fact, is kept** when the turn ends without
  a memory write: `memory_append` of the user's own words ("remember that X" keeps "X"; "Our
  release train leaves every second Tuesday." is kept as it is told, by the rules the demo
  brain and the flush by rule use, `shell.text.user_facts`), after the answer. The model
  answered such facts "I remember that …" and wrote nothing, so a question a few turns later
  found nothing (5 of 9 questions in `bench/real_server`).

Both run through the toolbox like any call (its approvals, secret redaction and path rules),
and show as cards marked "by Cairn". A model that does its own writes is never overruled:
the second rule looks at the turn's writes first.
"""

from __future__ import annotations

import json
import re
from uuid import uuid4

from shell.model.reply import ToolCallRequest
from shell.text.user_facts import is_question, stated_facts

_REMEMBER = re.compile(
    r"^\s*(?:please\s+)?(?:remember|note|keep\s+in\s+mind|don'?t\s+forget|do\s+not\s+forget"
    r"|(?:jot|write|note|put)\s+(?:this|that|it)\s+down(?:\s+for\s+me)?"
    r"|make\s+a\s+note(?:\s+of\s+(?:this|that))?)"
    r"(?:\s+that)?\s*[:,;.!\-–—]*\s+(?P<fact>\S.*)$",
    re.IGNORECASE | re.DOTALL,
)
_TAG = re.compile(r"[\s,]+(?:ok|okay|alright|right|yeah|yes|please|thanks)[?!.]*$", re.IGNORECASE)
"""A tag that makes a request look like a question: "Don't forget: it moved to Thursday, ok?"."""
MAX_QUERY_CHARS = 300


def question_in(prompt: str) -> str | None:
    """The query to search before answering: the prompt when it asks something."""
    text = " ".join(prompt.split())
    if not text.endswith("?") or _REMEMBER.match(_TAG.sub("", text)):
        return None
    return text[-MAX_QUERY_CHARS:]


def fact_to_remember(prompt: str) -> str | None:
    """What a "remember (that) …" prompt asks to keep, as a line of its own; None for any
    other prompt (a question, "do you remember …?", a fact said without asking)."""
    text = _TAG.sub("", " ".join(prompt.split()))
    if text.endswith("?") or (found := _REMEMBER.match(text)) is None:
        return None
    fact = found.group("fact").strip()
    return fact[0].upper() + fact[1:] if fact else None


def facts_to_keep(prompt: str) -> list[str]:
    """What a turn keeps of `prompt` for the model: what it asks to remember, else the facts
    it states; nothing for a question (the turn searches instead)."""
    if (fact := fact_to_remember(prompt)) is not None:
        return [fact]
    return [] if is_question(prompt) else stated_facts(prompt)


def cairn_call(name: str, arguments: dict[str, str], turn: int) -> ToolCallRequest:
    return ToolCallRequest(
        id=f"cairn-{turn}-{uuid4().hex[:8]}",
        name=name,
        arguments=json.dumps(arguments, ensure_ascii=False),
        by_cairn=True,
    )

"""Distilling: the one-line fact a proposal puts into MEMORY.md.

With a model, the deep phase makes one bounded call per sweep, asking for JSON of a given schema
(`prompts.DREAM_SCHEMA`). What comes back is checked (`problem`): every text answers a candidate
that exists, fits `max_proposal_tokens`, is a sentence about the user's world (`junk`), and names
no number, name or identifier its sources do not hold. Whatever fails falls back to distilling by
rule (the note's own words, cleaned), and the proposal says which was used and why.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Collection, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from shell import prompts
from shell.dreaming.facts import fact_of
from shell.dreaming.junk import junk_kind, statement
from shell.dreaming.wording import anchored
from shell.events import Event, ProposalKind, SourceRef
from shell.text import collapse
from shell.text.identifiers import identifiers
from shell.text.tokens import CONTEXT_ENCODING, count_tokens

if TYPE_CHECKING:
    from shell.model import LLM

PROMPT_SHARE = 2
"""The request takes at most 1/PROMPT_SHARE of the window; the rest is left for the answer."""
WORDS_PER_TOKEN = 0.75
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_NAME = re.compile(r"\b[A-ZÀ-Þ][\w'’-]*")
_NOT_NAMES = frozenset(
    """A An The This That These Those It Its He She His Her They Their Them We Our Us I My You
    Your On In At For From To And But Or If When Since After Before Every Each Also Now""".split()
)


@dataclass(frozen=True)
class Draft:
    """A proposal before its text is distilled."""

    key: str
    """Its id in the model's request ("c1", "u1")."""
    kind: ProposalKind
    source_text: str
    """The text of the note the fact comes from."""
    sources: list[SourceRef]
    replaces: str | None = None
    fact: str | None = None
    """The fact by rule when it is known already: an update's current fact."""


@dataclass(frozen=True)
class Distilled:
    text: str
    by_model: bool
    fallback: str | None
    """Why the rule's text was used when a model was asked."""


def by_rule(draft: Draft) -> str:
    """The fact the note states (`facts.fact_of`: a chat line's speaker resolved, reactions
    dropped, one fact; an update's current fact), else its own words, its relative times made
    the note's dates; one sentence with a capital and a full stop."""
    line = statement(draft.source_text)
    return as_sentence(_dated(draft, draft.fact or fact_of(line) or line))


def _dated(draft: Draft, text: str) -> str:
    """`text` with its relative times made dates from the draft's note (as it is without one)."""
    day = draft.sources[0].date if draft.sources else None
    return anchored(text, date.fromisoformat(day)) if day else text


def as_sentence(text: str) -> str:
    text = collapse(text).strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "…", ")", '"')) else text + "."


def problem(text: str, draft: Draft, max_tokens: int, dreamed: Collection[str] = ()) -> str | None:
    """Why `text` cannot be `draft`'s proposal, or None when it can."""
    if not text.strip():
        return "the model's text is empty"
    if "\n" in text.strip():
        return "the model's text is more than one line"
    if (tokens := count_tokens(text, CONTEXT_ENCODING)) > max_tokens:
        return f"the model's text is {tokens} tokens, over {max_tokens}"
    if (kind := junk_kind(text, dreamed)) is not None:
        return f"the model's text is not a fact ({kind.replace('_', ' ')})"
    dated = _dated(draft, draft.source_text)  # "last month" → the month the model may name
    source = f"{draft.source_text}\n{dated}\n{draft.replaces or ''}".lower()
    invented = [
        word
        for word in (*_NUMBER.findall(text), *_names(text), *identifiers(text))
        if word.lower() not in source
    ]
    if invented:
        return f"the model's text names {invented[0]!r}, which its sources do not"
    return None


def _names(text: str) -> list[str]:
    return [word for word in _NAME.findall(text) if word not in _NOT_NAMES]


class DistilCall:
    """The deep phase's one model call: forward its events, then read the texts it gave.

    call = DistilCall(llm, drafts, window=4096, max_tokens=160)
    async for event in call.events():
        yield event
    results = call.results(dreamed)
    """

    def __init__(self, llm: LLM, drafts: Sequence[Draft], *, window: int, max_tokens: int) -> None:
        self._llm = llm
        self._max_tokens = max_tokens
        self._system = prompts.dream_system(int(max_tokens * WORDS_PER_TOKEN))
        self._asked = _fitting(self._system, drafts, window // PROMPT_SHARE)
        self._drafts = list(drafts)
        self._answer_tokens = min(window // 4, 40 + len(self._asked) * (max_tokens + 20))
        self._answer: str | None = None
        self._failure: str | None = None

    async def events(self) -> AsyncIterator[Event]:
        """The call's events (retries); asked with a response format first, and once more
        without one when the provider refuses it (llama-cpp-python answers a JSON-schema
        format with a 500)."""
        from shell.loop.calls import ModelCall
        from shell.model import ModelError

        if not self._asked:
            self._failure = "the candidates do not fit the model's window"
            return
        request = [
            {"role": "system", "content": self._system},
            {"role": "user", "content": prompts.dream_prompt([_item(d) for d in self._asked])},
        ]
        structured: dict[str, Any]
        if await asyncio.to_thread(self._llm.supports_response_schema):  # may load litellm
            schema = {"name": "dream_proposals", "schema": prompts.DREAM_SCHEMA}
            structured = {"type": "json_schema", "json_schema": schema}
        else:  # JSON mode, which local servers take; llama.cpp also holds it to the schema
            structured = {"type": "json_object", "schema": prompts.DREAM_SCHEMA}
        bound: dict[str, Any] = {"max_tokens": self._answer_tokens}
        tries = [{"response_format": structured, "attempts": 1, **bound}, bound]
        for options in tries:
            call = ModelCall(self._llm, request, silent=True, options=options)
            try:
                async for event in call.events():
                    yield event
            except ModelError as error:
                self._failure = f"the model call failed ({error.kind}: {error.message})"
                continue
            self._answer, self._failure = call.reply.text, None
            return

    def results(self, dreamed: Collection[str] = ()) -> dict[str, Distilled]:
        """Each draft's text: the model's when it passed the check, else the rule's, saying
        why."""
        texts, failure = _parse(self._answer) if self._answer is not None else ({}, None)
        failure = failure or self._failure
        asked = {draft.key for draft in self._asked}
        results = {}
        for draft in self._drafts:
            reason = failure
            if draft.key not in asked:
                reason = "it did not fit the model's window"
            elif reason is None:
                text = as_sentence(texts.get(draft.key, ""))
                if draft.key not in texts:
                    reason = "the model gave no text for it"
                elif (found := problem(text, draft, self._max_tokens, dreamed)) is None:
                    results[draft.key] = Distilled(text, True, None)
                    continue
                else:
                    reason = found
            results[draft.key] = Distilled(by_rule(draft), False, reason)
        return results


def distil_by_rule(drafts: Sequence[Draft]) -> dict[str, Distilled]:
    return {draft.key: Distilled(by_rule(draft), False, None) for draft in drafts}


def _item(draft: Draft) -> dict[str, str]:
    item = {"id": draft.key, "date": draft.sources[0].date or "", "text": draft.source_text}
    if draft.replaces is not None:
        item["replaces"] = draft.replaces
    if draft.fact is not None:
        item["now"] = draft.fact
    return item


def _fitting(system: str, drafts: Sequence[Draft], budget: int) -> list[Draft]:
    """The drafts, in order, whose request stays within `budget` tokens."""
    used = count_tokens(system, CONTEXT_ENCODING) + 20
    fitting = []
    for draft in drafts:
        cost = count_tokens(json.dumps(_item(draft), ensure_ascii=False), CONTEXT_ENCODING) + 4
        if used + cost > budget:
            break
        used += cost
        fitting.append(draft)
    return fitting


def _parse(answer: str) -> tuple[dict[str, str], str | None]:
    """The texts by candidate id, or why the answer cannot be read."""
    text = answer.strip()
    if text.startswith("```"):  # a fenced answer despite the schema
        text = text.strip("`").removeprefix("json").strip()
    try:
        data = json.loads(text)
        items = data["proposals"]
        if not isinstance(items, list):
            raise TypeError
        return {
            str(item["id"]): str(item["text"])
            for item in items
            if isinstance(item, dict) and "id" in item and "text" in item
        }, None
    except (ValueError, KeyError, TypeError):
        return {}, "the model's answer was not the JSON asked for"

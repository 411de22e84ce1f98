"""What is worth keeping of a user message: which facts a turn saves at once (`turn_facts`) or a
pre-compaction flush keeps (`durable_facts`). The offline demo brain saves by these rules, and
so does the flush by rule that stands in for a small model that stores nothing
(`shell.lifecycle.rule_flush`). Which sentences state a fact at all is decided by
`shell.text.statements` (shared with dreaming).

The turn saves what a message asks to remember or states as a fact, unless the message asks a
question (then it searches memory). The flush keeps a superset, cleaned the same way, so it can
tell what a turn already saved: facts told along with a question, todos, deadlines, identifiers.
Pure functions over strings, no litellm and no clock.
"""

from __future__ import annotations

import re

from shell.text import sentences
from shell.text.identifiers import identifiers
from shell.text.statements import (
    clean_fact,
    is_question,
    is_statement_of_fact,
    remembered_fact,
    without_opener,
)

__all__ = [
    "durable_facts",
    "is_question",
    "is_statement_of_fact",
    "remembered_fact",
    "stated_facts",
    "turn_facts",
    "without_opener",
]

# --- what a user message asks to keep ---------------------------------------------------------

_STATED = re.compile(
    r"^(?:(?:i|we)\s+(?:really\s+|now\s+|have\s+|'ve\s+)?"
    r"(?:prefer|decided|chose|agreed|always|never|will always|will never)\b"
    r"|(?:i've|we've)\s+decided\b"
    r"|(?:our|my)\s+[\w' -]{1,40}?\s+(?:is|are|was|will be)\b"
    r"|from now on\b"
    r"|(?:the\s+)?decision\b)",
    re.IGNORECASE,
)
_DURABLE = re.compile(
    r"\b(?:remember|prefer|prefers|preference|decided|decision|agreed|chose|from now on|always"
    r"|never|deadline|due|todo|to-do|need to|needs to|must|remind|don't forget|we will|we'll"
    r"|by (?:mon|tue|wed|thu|fri|sat|sun)\w*|(?:our|my) [\w'-]+(?: [\w'-]+)? (?:is|are))\b",
    re.IGNORECASE,
)


def _stated(sentence: str) -> str | None:
    """The fact one sentence states: what it asks to remember, or, without a leading "ok," or
    "FYI:", a preference or decision ("I prefer …", "we decided …") or any plain statement of
    fact ("My sister lives in Tromsø."). None for questions, requests and small talk."""
    if sentence.endswith("?"):
        return None
    if (remembered := remembered_fact(sentence)) is not None:
        return remembered
    core = without_opener(sentence)
    if _STATED.match(core) or is_statement_of_fact(core):
        return clean_fact(core) or None
    return None


def stated_facts(text: str) -> list[str]:
    """The facts `text` states, one per sentence, in order (see `_stated`)."""
    return [fact for s in sentences(text) if (fact := _stated(s))]


def turn_facts(text: str) -> list[str]:
    """What a user turn saves of `text` at once: the fact it asks to remember, else the facts
    it states; nothing when it asks a question (the turn searches memory instead)."""
    if (fact := remembered_fact(text)) is not None:
        return [fact]
    return [] if is_question(text) else stated_facts(text)


def durable_facts(text: str) -> list[str]:
    """Everything in a user message worth keeping past compaction: remembered facts, stated
    facts, preferences and decisions, deadlines, todos, and sentences carrying identifiers.

    A superset of what the user turn saves (`turn_facts`), cleaned the same way, so the flush
    recognises what a turn saved (or is about to save) and does not save it twice."""
    if (fact := remembered_fact(text)) is not None:
        return [fact]
    facts = []
    for sentence in sentences(text):
        if is_question(sentence):
            facts.extend(_told_before_asking(sentence))
            continue
        if stated := _stated(sentence):
            facts.append(stated)
        elif _DURABLE.search(sentence) or identifiers(sentence):
            facts.append(clean_fact(sentence))
    return [f for f in facts if f]


_CLAUSE_BREAK = re.compile(r"\s*(?:[,;]|\s[-–—]|\band\b)\s+(?=\S)")


def _told_before_asking(sentence: str) -> list[str]:
    """The facts a question carries before it asks: "our deploy window is Friday 14:00, when is
    the review?" keeps the deploy window. Only the clauses ahead of the first one that asks
    count, and only plain statements of fact or decisions (not "can you remind me …")."""
    facts = []
    for clause in _CLAUSE_BREAK.split(sentence):
        if is_question(clause):
            break
        core = without_opener(clause)
        if _STATED.match(core) or is_statement_of_fact(core):
            facts.append(clean_fact(core))
    return facts

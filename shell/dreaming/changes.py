"""Whether a newer fact changes an older one: the same subject, and evidence that its value
changed, never a cue word alone.

On real conversations a cue word ("started", "now", "since") plus a shared name made false
updates of 4 in 5 facts that were still true ("Caroline works as a counselor" / "Caroline
started a painting class"), while a plain supersession was missed ("Kari lives in Oslo." / "Kari
moved from Oslo to Bergen in March."). `change` asks for one of six kinds of evidence:

- **from → to**: the newer fact moves the older one's value: "moved from Oslo to Bergen";
- **ended**: it ends the older value: "sold his Volvo", "quit the band", "no longer eats meat";
- **same slot**: the older fact's predicate with another value of the same kind: "works at
  Acme" → "now works at Globex", "is vegetarian" → "is vegan";
- **typed value**: a weekday, time, month, number or handle of the older fact, another of the
  same type in the newer, with a verb of change: "Friday 14:00" → "moved to Thursday 10:00";
- **switch**: "switched to", "changed to", "replaced", "instead of" with a related value:
  "takes his coffee black" → "switched to oat lattes";
- **new home**: another place, said of where one lives: "rents a flat in Grünerløkka" →
  "bought a house in Asker".

What it replaces is written as the current fact: "Kari lives in Bergen." for a move, the newer
fact otherwise. `related(a, b)` is the caller's: the cosine of two short texts.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from shell.dreaming.signals import concepts
from shell.memory.search.ranking import jaccard, word_tokens

RESTATED_JACCARD = 0.8
VALUE_SIMILARITY = 0.25
"""The least cosine (MiniLM) between two values of one slot: Acme / Globex 0.30, vegetarian /
vegan 0.75, Oslo / Bergen 0.59, coffee black / oat lattes 0.32; a value of another kind: "a
counselor" / "excited about the parade" 0.01, "a teacher" / "tired today" 0.13."""

_VERBS = frozenset(
    """is are was were has have had lives lived works worked plays played drives drove takes took
    leads led owns owned uses used prefers preferred loves loved likes liked writes wrote teaches
    taught studies studied runs ran goes went called named drinks drank eats ate speaks spoke
    wears wore keeps kept meets met starts started moved switched sold bought quit left joined
    became becomes got gets live work play drive take lead own use prefer love like write teach
    study run go drink eat speak wear keep meet start sell buy join become get""".split()
)
_BETWEEN = ("now", "also", "still", "currently", "actually", "finally", "recently", "just")
"""Words that may stand between a subject and its verb in the newer fact."""
_PREPOSITIONS = frozenset("at in on for with as to from of by".split())
_ADDITIVE = re.compile(r"\b(?:too|also|another|as well|second|third|more|besides)\b", re.I)
_ENDED = re.compile(
    r"\b(?:sold|quit|quits|left|leaves|stopped|stops|gave up|gives up|no longer|not\s+\w+\s+any"
    r"\s?more|broke up with|divorced|retired from|closed|lost|moved out of|gave away|cancel+ed"
    r"|ended|dropped|doesn't|does not|isn't|is not)\b",
    re.I,
)
_SWITCH = re.compile(
    r"\b(?:switched|switches|changed|changes|replaced|replaces|swapped|converted|instead of"
    r"|renamed|moved)\b",
    re.I,
)
_FROM_TO = re.compile(
    r"\bfrom\s+(?:the\s+|his\s+|her\s+|their\s+|its\s+)?(?P<old>[\w#@.'’-]+(?:\s+[A-Z][\w'’-]*)?)"
    r"\s+to\s+(?:the\s+)?(?P<new>[\w#@.'’-]+(?:\s+[A-Z\d][\w:'’-]*)?)",
)
_PLACE = re.compile(r"\b(?:in|at|to|near)\s+([A-ZÀ-Þ][\w'’-]+(?:\s+[A-ZÀ-Þ][\w'’-]+)?)")
_HOME = re.compile(
    r"\b(?:live[sd]?|living|moved|moving|relocated|settled|bought|buys|rents?|rented|renting"
    r"|owns?|home|house|flat|apartment)\b",
    re.I,
)
"""Where someone lives: a place that changes is a change only with one of these ("went on
holiday in Rome" changes nobody's home)."""
_TYPES: dict[str, re.Pattern[str]] = {
    "weekday": re.compile(r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b", re.I),
    "time": re.compile(r"\b\d{1,2}:\d{2}\b|\b\d{1,2}\s?(?:am|pm)\b", re.I),
    "month": re.compile(
        r"\b(?:january|february|march|april|may|june|july|august|september|october|november"
        r"|december)\b",
        re.I,
    ),
    "handle": re.compile(r"(?<!\w)[#@][\w.-]+"),
    "number": re.compile(r"(?<![\w:])\d+(?:[.,]\d+)?(?![\w:])"),
}


@dataclass(frozen=True)
class Change:
    evidence: str
    """What in the newer fact says the value changed ("from Oslo to Bergen", "sold … Volvo")."""
    current: str
    """The fact as it stands now, for the line it replaces."""


def subject(fact: str) -> frozenset[str]:
    """The naming words before the fact's first verb: "Kari" of "Kari lives in Oslo", "deploy
    window" of "Our deploy window is Friday"."""
    words = fact.split()
    head: list[str] = []
    for index, word in enumerate(words):
        if index and _is_verb(words, index):
            break
        head.append(word)
    return frozenset(_stem(w) for w in concepts(" ".join(head).replace("'s", "").replace("’s", "")))


def change(old: str, new: str, related: Callable[[str, str], float]) -> Change | None:
    """How `new` (a newer fact) changes `old`, or None when it does not (see the module)."""
    who = subject(old)
    old_values = {_stem(w) for w in concepts(old)} - who
    named = _stems(new) | {_stem(w) for w in word_tokens(new)}
    if not who or not (who <= named or (who & named and old_values & named)):
        return None  # another subject: all of it named, or part of it beside the old value
    if jaccard(word_tokens(old), word_tokens(new)) >= RESTATED_JACCARD:
        return None
    if _ADDITIVE.search(new):
        return None
    if moved := _FROM_TO.search(new):
        if _stem(_plain(moved.group("old").split()[0])) in old_values:
            current = old.replace(moved.group("old"), moved.group("new"), 1)
            if current == old:
                current = new
            return Change(f"from {moved.group('old')} to {moved.group('new')}", current)
    if (ended := _ENDED.search(new)) and (value := _names_after(new, ended.end(), old_values)):
        return Change(f"{ended.group(0)} … {value}", new)
    if slot := _same_slot(old, new, who):
        old_value, new_value = slot
        if related(old_value, new_value) >= VALUE_SIMILARITY:
            return Change(f"{old_value} → {new_value}", new)
    if (switch := _SWITCH.search(new)) is not None:
        for kind, pattern in _TYPES.items():
            before, after = set(pattern.findall(old)), set(pattern.findall(new))
            if before and after and not after & before:
                return Change(f"{kind} {sorted(before)[0]} → {sorted(after)[0]}", new)
        if related(_beyond(old, who), _beyond(new, who)) >= VALUE_SIMILARITY * 0.8:
            return Change(switch.group(0), new)
    if _HOME.search(new) and (places := _moved_place(old, new)):
        if related(_beyond(old, who), _beyond(new, who)) >= VALUE_SIMILARITY:
            return Change(f"{places[0]} → {places[1]}", new)
    return None


def _moved_place(old: str, new: str) -> tuple[str, str] | None:
    """The place of the older fact and another the newer one names ("in Grünerløkka" / "in
    Asker")."""
    before, after = _PLACE.findall(old), _PLACE.findall(new)
    if before and after and not set(after) & set(before):
        return before[0], after[0]
    return None


def _same_slot(old: str, new: str, who: frozenset[str]) -> tuple[str, str] | None:
    """The older and newer values of the older fact's predicate ("works at"), when the newer
    fact says the predicate with another value."""
    words = old.split()
    verb_at = next((i for i in range(1, len(words)) if _is_verb(words, i)), None)
    if verb_at is None:
        return None
    predicate = [words[verb_at]]
    if verb_at + 1 < len(words) and _plain(words[verb_at + 1]) in _PREPOSITIONS:
        predicate.append(words[verb_at + 1])
    anchor = _plain(words[verb_at - 1])  # the subject's last word: the predicate is its own
    pattern = re.compile(  # "Marta now works at", not "John's favorite character is"
        rf"\b{re.escape(anchor)}\s+(?:(?:{'|'.join(_BETWEEN)})\s+)*"
        + r"\s+(?:now\s+|also\s+)?".join(re.escape(_plain(w)) for w in predicate)
        + r"\s+(.+)",
        re.I,
    )
    found = pattern.search(new)
    if found is None:
        return None
    old_value = " ".join(words[verb_at + len(predicate) :]).rstrip(".!")
    new_value = re.split(r"[.,;!]| (?:since|because|and|as|for|with|in|on|from) ", found.group(1))[
        0
    ].strip()
    if not old_value or not new_value or _stems(new_value) <= _stems(old_value) | who:
        return None
    if _stems(old_value) - who <= _stems(new_value):
        return None  # the old value is still there: said again, or added to
    if {_stem(w) for w in concepts(old_value)} & {_stem(w) for w in concepts(new_value)}:
        return None  # the same thing said more or less precisely: "a fan of …" / "a movie fan"
    return old_value, new_value


def _names_after(text: str, start: int, values: set[str]) -> str:
    """The first of `values` named within five words after `start`, or ""."""
    for word in text[start:].split()[:5]:
        if _stem(_plain(word)) in values:
            return _plain(word)
    return ""


def _beyond(fact: str, who: frozenset[str]) -> str:
    kept = [w for w in fact.split() if _stem(_plain(w)) not in who]
    return " ".join(kept) or fact


_DETERMINERS = frozenset(
    "a an the my our his her their its your this that these those and or".split()
)


def _is_verb(words: list[str], index: int) -> bool:
    """Whether `words[index]` reads as the fact's verb: a known one, or a word in -s or -ed
    that does not follow a determiner ("my parents" is no verb)."""
    word = _plain(words[index])
    if word in _VERBS:
        return True
    if _plain(words[index - 1]) in _DETERMINERS or len(word) <= 3:
        return False
    return word.endswith("ed") or (word.endswith("s") and not word.endswith("ss"))


def _plain(word: str) -> str:
    return word.lower().strip(".,;:!?\"'“”‘’()").removesuffix("'s").removesuffix("’s")


def _stem(word: str) -> str:
    word = word.lower().removesuffix("'s").removesuffix("’s")
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _stems(text: str) -> set[str]:
    return {_stem(_plain(w)) for w in text.split() if _plain(w)}

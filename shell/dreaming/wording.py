"""How a fact is worded for MEMORY.md, which is read months later by someone other than the
speaker: in the third person ("I love my dog" → "Dave loves their dog") and with dates instead
of relative times ("last month" → "in November 2026"). Pure functions over strings.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

_IRREGULAR = {
    "am": "is",
    "was": "was",
    "have": "has",
    "haven't": "hasn't",
    "do": "does",
    "don't": "doesn't",
    "go": "goes",
    "can": "can",
    "could": "could",
    "will": "will",
    "would": "would",
    "should": "should",
    "might": "might",
    "must": "must",
    "may": "may",
    "wasn't": "wasn't",
    "can't": "can't",
    "won't": "won't",
    "didn't": "didn't",
}
_ADVERBS = frozenset(
    """just really also still always never often usually sometimes finally recently actually
    even already now totally definitely absolutely truly mostly currently""".split()
)
_FIRST_PERSON_WORD = re.compile(
    rf"\b(?:I(?:'|’)(?P<contraction>m|ve|ll|d)|I\s+(?P<adverbs>(?:(?:{'|'.join(sorted(_ADVERBS))})\s+)*)"
    rf"(?P<verb>[\w'’]+)|(?P<other>I|me|my|mine|myself|we|us|our|ours))\b",
    re.IGNORECASE,
)
_ENGLISH = re.compile(
    r"\bI\b|\b(?i:i'm|i’m|i've|i’ve|the|and|to|of|with|my|me|is|was|have|has|am|for|at|in|on"
    r"|we|our|us)\b"
)
"""A word only English puts in a sentence like this, else the sentence is left as it is."""
_CONTRACTED = {"m": "is", "ve": "has", "ll": "will", "d": "would"}


def third_person(text: str, speaker: str) -> str:
    """`text` said by `speaker`, in the third person: "I" is the speaker and its verb agrees,
    "my" is the speaker's ("their" once the speaker is named), "we" is the speaker and others:
    "I love my dog" → "Dave loves their dog"; "my sister moved" → "Dave's sister moved"."""
    if not _ENGLISH.search(text):
        return text  # "Søsteren min bor i Tromsø": "i" is "in" here
    named = False

    def replace(match: re.Match[str]) -> str:
        nonlocal named
        word = match.group(0)
        if (contraction := match.group("contraction")) is not None:
            named = True
            return f"{speaker} {_CONTRACTED[contraction.lower()]}"
        if (verb := match.group("verb")) is not None:
            named = True
            return f"{speaker} {match.group('adverbs')}{_third_person_verb(verb)}"
        other = word.lower()
        if other == "i":
            named = True
            return speaker
        if other in ("me", "myself"):
            said = "them" if named else speaker
        elif other in ("my", "mine"):
            said = "their" if named and other == "my" else f"{speaker}'s"
        elif other in ("we", "us"):
            said = f"{speaker} and others"
        elif other in ("our", "ours"):
            said = f"{speaker}'s"
        else:
            return word
        named = True
        return said[0].upper() + said[1:] if word[0].isupper() else said

    return _FIRST_PERSON_WORD.sub(replace, text)


def _third_person_verb(verb: str) -> str:
    lowered = verb.lower().replace("’", "'")
    if lowered in _IRREGULAR:
        return _IRREGULAR[lowered]
    if lowered.endswith("ed") or lowered.endswith("n't") or not lowered.isalpha():
        return verb
    if lowered in _PAST:
        return verb
    if re.search(r"[^aeiou]y$", lowered):
        return verb[:-1] + "ies"
    if lowered.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    return verb + "s"


_PAST = frozenset(
    """went got had made took saw found bought met began did was were came gave knew left lost
    ran sold sent spent thought told won wrote became brought built caught chose drove ate fell
    felt flew forgot grew heard held kept led paid put read rode said sang sat slept spoke stood
    swam taught threw understood woke wore set let cut hit hurt shut spread""".split()
)


def anchored(text: str, day: date) -> str:
    """`text`, written in the note of `day`, with its relative times made dates: "yesterday"
    → "on 6 December 2026", "last month" → "in November 2026" (a MEMORY.md line is read months
    later, when "last month" means another month)."""
    previous_month = (day.replace(day=1) - timedelta(days=1)).replace(day=1)
    spans = {
        "yesterday": f"on {_day(day - timedelta(days=1))}",
        "today": f"on {_day(day)}",
        "tonight": f"on {_day(day)}",
        "this morning": f"on {_day(day)}",
        "this afternoon": f"on {_day(day)}",
        "this evening": f"on {_day(day)}",
        "last night": f"on {_day(day - timedelta(days=1))}",
        "last weekend": f"the weekend before {_day(day)}",
        "this weekend": f"the weekend of {_day(day)}",
        "last week": f"the week before {_day(day)}",
        "this week": f"the week of {_day(day)}",
        "last month": f"in {previous_month:%B %Y}",
        "this month": f"in {day:%B %Y}",
        "last year": f"in {day.year - 1}",
        "this year": f"in {day.year}",
    }
    pattern = re.compile(r"\b(?:" + "|".join(spans) + r")\b", re.IGNORECASE)
    text = pattern.sub(lambda m: spans[m.group(0).lower()], text)
    text = _LAST_WEEKDAY.sub(lambda m: f"on {_day(_weekday_before(day, m.group(1)))}", text)
    return _AGO.sub(lambda m: f"around {_day(_ago(day, m))}", text)


_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_LAST_WEEKDAY = re.compile(rf"\b(?:last|on|this past)\s+({'|'.join(_WEEKDAYS)})\b", re.IGNORECASE)
_AGO = re.compile(
    r"\b(a|an|one|two|three|four|five|six|\d+|a few|a couple of)\s+(day|week|month)s?\s+ago\b",
    re.IGNORECASE,
)
_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


def _weekday_before(day: date, name: str) -> date:
    back = (day.weekday() - _WEEKDAYS.index(name.lower())) % 7 or 7
    return day - timedelta(days=back)


def _ago(day: date, match: re.Match[str]) -> date:
    amount = match.group(1).lower()
    count = int(amount) if amount.isdigit() else _COUNTS.get(amount, 3 if "few" in amount else 2)
    unit = {"day": 1, "week": 7, "month": 30}[match.group(2).lower()]
    return day - timedelta(days=count * unit)


def _day(day: date) -> str:
    return f"{day.day} {day:%B %Y}"

"""Which sentences state a fact about the user's world, and what a "remember that …" asks to
keep: rules the demo brain uses to decide what to save, and dreaming uses to keep commands, small
talk and questions out of MEMORY.md.

A statement of fact is a declarative sentence about the user's world (names, places, numbers,
dates, schedules, choices), such as "Our release train leaves every second Tuesday." or "I drink
green tea every morning.". `is_statement_of_fact` decides with a few readable rules, in order:

1. Leading interjections are dropped first ("ok,", "btw", "FYI:", "thanks,", "no, …").
2. Fewer than `MIN_WORDS` words, a question, a request to the assistant ("tell me…", "can you…",
   "let's…") or small talk ("thanks a lot", "sounds good to me", "lol") is never a fact.
3. A specific detail makes it a fact: a digit, a capitalised name after the first word, or an
   identifier such as cairn-backups-eu or db.internal.
4. Otherwise a vague subject ("that's…", "it…", "you…") is chat, not a fact.
5. A calendar word (a month, a weekday, "every", "weekly", "morning", "winter", …) is a fact.
6. So is a first-person statement ("I live…", "we use…"), unless it is about the chat ("I
   think…", "I see…", "I'm fine…"); a possessive ("my sister…", "our CI…"); or a subject with a
   verb of state ("the build is red", "backups go to…", "Priya leads…").

Pure functions over strings.
"""

from __future__ import annotations

import re

from shell.text import collapse

MIN_WORDS = 4

QUESTION_WORDS = frozenset(
    "when what who where which how did do does is are was were whats what's".split()
)

_OPENER = re.compile(
    r"^(?:"
    r"(?:ok|okay|so|well|also|and|but|oh|btw|fyi|anyway|by the way|just so you know|heads up"
    r"|for the record)\b[\s,:;!.-]*"
    r"|(?:thanks|thank you|cool|great|nice|awesome|perfect|lol|haha|hi|hello|hey|sure|yes|yeah"
    r"|no|right|good|good news)\s*[,:;!.-]+\s*"
    r")+",
    re.IGNORECASE,
)
_REQUESTS = frozenset(
    """can could would will please tell show help give explain find search look check write
    draft make list let let's summarise summarize describe try imagine remind""".split()
)
_SMALL_TALK = frozenset(
    """thanks thank thx ty cool great nice awesome perfect lol lmao haha hah hehe wow sounds
    good bye goodbye cheers sorry yes yeah yep yup no nope nah sure right exactly indeed fine
    hello hi hey""".split()
)
_VAGUE_SUBJECTS = frozenset(
    """that that's this it it's you you're you've there there's which everything nothing
    something""".split()
)
_FIRST_PERSON = frozenset("i we i'm we're i've we've i'll we'll i'd we'd".split())
_ADVERBS = frozenset(
    "really usually always often never also still now just all both so very pretty quite".split()
)
_ABOUT_THE_CHAT = frozenset(
    """think guess see agree understand know mean hope feel suppose wonder bet appreciate get
    got love like am was fine good ok okay great well glad happy sorry back here done doing
    tired bored curious confused not""".split()
)
"""Words after "I"/"we" (past an adverb) that make the sentence about the chat, not a fact. "am"
and "was" are here because "I am/was" is followed by how the user feels far more often than by
a fact; "I'm learning Rust" is caught by its name before this list is consulted."""
_POSSESSIVES = frozenset("my our mine ours".split())
_STATE_VERBS = frozenset(
    """is are was were be been being will has have had lives live lived works work worked runs
    run ran leaves leave left happens happen happened goes go went starts start started begins
    begin ends end meets meet uses use used owns own belongs belong means tracks moved ships
    shipped takes costs lasts sits stays holds keeps needs drinks eats plays speaks studies
    teaches born married called named located based hosted stored deployed""".split()
)
CALENDAR = re.compile(
    r"\b(?:january|february|march|april|june|july|august|september|october|november|december"
    r"|(?:mon|tues|wednes|thurs|fri|satur|sun|week)days?|weekends?|every|daily|nightly|weekly"
    r"|fortnightly|monthly|quarterly|yearly|annually|mornings?|afternoons?|evenings?|noon"
    r"|midnight|spring|summer|autumn|winter|o'clock)\b",
    re.IGNORECASE,
)
_IDENTIFIER = re.compile(r"\w[\w-]*[_./@:][\w-]*\w|\w+(?:-\w+){2,}")
"""A token such as db.internal, cairn_backups, ops@example.com or cairn-backups-eu."""
_NOT_NAMES = frozenset("I I'm I've I'll I'd OK Ok Cairn".split())
"""Capitalised words that name nobody in the user's world: the user, "OK", and the assistant."""
_PUNCTUATION = "\"'“”‘’()[]{}.,;:!?*_`"


def is_question(text: str) -> bool:
    """Whether `text` asks something: it ends with '?' or opens with a question word."""
    text = text.strip()
    if not text:
        return False
    first = text.split()[0].lower().strip(",.!:;")
    return text.endswith("?") or first in QUESTION_WORDS


def without_opener(sentence: str) -> str:
    """`sentence` without leading interjections: "ok, btw our CI is red" → "our CI is red"."""
    return _OPENER.sub("", sentence.strip().replace("’", "'"), count=1).strip()


def _words(text: str) -> list[str]:
    return [w for w in (token.strip(_PUNCTUATION) for token in text.split()) if w]


def _has_specifics(text: str, words: list[str]) -> bool:
    """A digit, a capitalised name after the first word, or an identifier."""
    names = [w for w in words[1:] if w[0].isupper() and w not in _NOT_NAMES]
    return bool(re.search(r"\d", text) or names or _IDENTIFIER.search(text))


def _first_person_fact(lowered: list[str]) -> bool:
    """ "I live in …", "we use …": a first-person statement that is not about the chat."""
    rest = [w for w in lowered[1:] if w not in _ADVERBS]
    return bool(rest) and rest[0] not in _ABOUT_THE_CHAT


def _has_subject_and_verb(lowered: list[str]) -> bool:
    """A verb of state after the subject ("the build is red", "backups go to …"), a
    third-person or past verb in second place ("Priya leads …", "Marta moved …"), or a past
    verb after a subject led by "the" ("the office wifi password changed …")."""
    if any(word in _STATE_VERBS for word in lowered[1:]):
        return True
    second = lowered[1]
    if len(second) > 3 and second.endswith(("s", "ed")) and not second.endswith("ss"):
        return True
    return lowered[0] == "the" and any(
        len(word) > 4 and word.endswith("ed") for word in lowered[2:5]
    )


def is_statement_of_fact(sentence: str, *, min_words: int = MIN_WORDS) -> bool:
    """Whether one sentence plainly states a fact about the user's world (see the module
    docstring for the rules, in order). `min_words` is lower for a line already kept in memory
    ("Priya leads billing") than for a chat message, where short replies are mostly chat."""
    text = without_opener(sentence)
    words = _words(text)
    if len(words) < min_words or is_question(text) or sentence.strip().endswith("?"):
        return False
    lowered = [w.lower() for w in words]
    if lowered[0] in _REQUESTS or lowered[0] in _SMALL_TALK:
        return False
    if _has_specifics(text, words):
        return True
    if lowered[0] in _VAGUE_SUBJECTS:
        return False
    if CALENDAR.search(text):
        return True
    if lowered[0] in _FIRST_PERSON:
        return _first_person_fact(lowered)
    return any(w in _POSSESSIVES for w in lowered) or _has_subject_and_verb(lowered)


# --- what a message asks to remember ---------------------------------------------------------

_REMEMBER = re.compile(
    r"^(?:(?:please|hey|ok|okay|so|and)[,!]?\s+)*(?:can you\s+|could you\s+)?"
    r"(?:remember|note|don't forget|do not forget|keep in mind)\b[\s:,-]*(?:that\b\s*)?",
    re.IGNORECASE,
)


def clean_fact(text: str) -> str:
    """One line, without the closing full stop or exclamation."""
    return collapse(text).rstrip(".! ").strip()


def remembered_fact(text: str) -> str | None:
    """The fact in a "remember that …" request, or None when `text` is not one."""
    text = text.strip()
    if text.endswith("?"):
        return None
    match = _REMEMBER.match(text)
    if match is None:
        return None
    return clean_fact(text[match.end() :]) or None

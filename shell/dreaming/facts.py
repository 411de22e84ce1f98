"""A note's line as the fact it states: what a proposal puts into MEMORY.md when no model distils.

Daily notes hold chat as much as facts: "- Dave: Wow, Calvin! That's amazing news! I just got a
job at Acme." A reviewer keeps "Dave just got a job at Acme." and nothing else. `fact_of` reads a
line that way:

- a speaker prefix ("Dave:") says who "I" is; the assistant's own lines state nothing of the
  user's world;
- emoji, emoticons, quotes around the whole line and a shared photo's caption go;
- reactions and praise ("That's amazing, Calvin!"), greetings, thanks, encouragement, feelings
  ("I'm so excited"), the talk itself ("I totally agree"), questions and sentences about the
  listener ("You did great") are dropped, in English and the languages `SMALL_TALK_WORDS`
  lists; so is, in a spoken line, an opinion that says neither "I" nor names anything
  ("Pottery's a great way to relax");
- of what is left, one sentence is the fact (one fact per proposal): the speaker's own before
  any other, then the one that names the most; a next sentence that only goes on about it
  ("His name is Max.") stays with it. It is written in the third person (`wording`): "I'm" →
  "Dave is", "my" → "Dave's", "I love" → "Dave loves".

None when nothing is left: the line is chat. Pure functions over strings.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from shell.dreaming.signals import concepts
from shell.dreaming.wording import third_person
from shell.text import collapse, sentences
from shell.text.statements import (
    CALENDAR,
    is_question,
    is_statement_of_fact,
    without_opener,
)

NOTE_MIN_WORDS = 3
"""A line kept in a note may state a fact in three words ("Priya leads billing")."""
_SPEAKER = re.compile(r"^(?P<name>[A-ZÀ-Þ][\w'’.-]*(?: [A-ZÀ-Þ][\w'’.-]*){0,2}):\s+(?P<said>\S.*)$")
_LABELS = frozenset(
    """note notes todo to-do deadline update decision reminder fact summary source re fwd fw q a
    answer question tip warning important status goal plan idea edit ps p.s date time location
    address email phone url link ref example context result results next why how what when where
    who""".split()
)
"""Words that open a line as a label ("Deadline: Friday"), not as a speaker."""
_ASSISTANTS = frozenset("assistant cairn ai bot model system".split())
_SHARED = re.compile(
    r"\s*\[(?:shares?|shared|sends?|sent)\s+(?:an?\s+)?(?:photo|image|picture|link|video)[^\]]*\]",
    re.IGNORECASE,
)
_EMOTICON = re.compile(r"(?<!\w)(?:[:;=8xX]-?[)(DPpOo/\\|*]+|<3+|\^_?\^)(?!\w)")
_QUOTED = re.compile(r'^["“”«»„](.*)["“”«»]$')

SMALL_TALK_WORDS = frozenset(
    """hi hello hey hiya yo thanks thank thx ty cheers bye goodbye lol lmao haha hahaha hehe wow
    omg aw aww awww yay woohoo congrats congratulations sorry ok okay sure yes yeah yep nope nah
    cool great nice awesome amazing wonderful fantastic incredible lovely beautiful sweet
    hei heisann hallo takk tusen mange ha det hadet god morgen kveld natt gratulerer hurra koselig
    flott fint herlig supert hej tack hejdå grattis danke bitte tschüss servus moin glückwunsch
    super toll prima merci bonjour salut coucou bravo félicitations génial hola gracias adiós
    felicidades genial vale ciao grazie""".split()
)
"""Words a greeting, thanks or reaction opens with, in English and Norwegian, Swedish, Danish,
German, French, Spanish and Italian (hei, takk, tack, danke, merci, gracias…)."""
_REACTION_START = re.compile(
    r"^(?:that|this|it|those|these|what|how|so|sounds|looks|seems|must|such)\b(?:'s|’s|\s+is|\s+was"
    r"|\s+sounds|\s+looks|\s+seems|\s+must|\s+a|\s+an|\s+so|\s+really|\s+totally|\s+super|\s+be"
    r"|\s+great|\s+cool|\s+awesome|\s+amazing|\s+fun|\s+nice|\s+lovely|\s+wonderful|\s+beautiful"
    r"|\s+exciting|\s+impressive|\s+incredible|\s+fantastic|\s+sweet|\s+cute|\s+tough|\s+hard"
    r"|\s+sad|\s+awful)\b",
    re.IGNORECASE,
)
"""A sentence that reacts to what the other person said: "That's amazing", "What a view",
"Sounds fun", "How cool"."""
_ENCOURAGEMENT = re.compile(
    r"^(?:keep|good luck|best of luck|hang in|take care|enjoy|have (?:a|fun)|let me know|glad"
    r"|happy for|proud of|can't wait|cannot wait|see you|talk (?:soon|later)|catch you|stay"
    r"|don't give up|never give up|you got this|i'm (?:so |really |super )?(?:glad|happy|proud"
    r"|sorry|excited|thrilled|grateful|thankful|impressed|amazed|touched) (?:for|to hear|of|that"
    r"|you))",
    re.IGNORECASE,
)
_FEELING = re.compile(
    r"^(?:i'm|i’m|i am|i was|i feel|i felt|i've been|i’ve been|we're|we’re|we are)\s+"
    r"(?:(?:so|really|super|very|just|totally|pretty|truly|incredibly|beyond)\s+)*(?:excited"
    r"|thankful|grateful|happy|glad|proud|stoked|thrilled|sad|nervous|blessed|lucky|amazed"
    r"|impressed|touched|pumped|psyched|honou?red|relieved|overwhelmed|inspired|moved|fine|good"
    r"|okay|ok|great|well|doing (?:ok|okay|well|good|fine|great|alright|better))\b",
    re.IGNORECASE,
)
"""How the speaker feels now ("I'm so excited and thankful"): no fact to keep."""
_ABOUT_THE_TALK = re.compile(
    r"^(?:i|we)\s+(?:(?:totally|completely|really|so|just|also|fully|definitely|absolutely"
    r"|do|don't|can't|cannot)\s+)*(?:agree|understand|appreciate|bet|guess|mean|see|know what"
    r"|get (?:it|that|you)|wish you|hope you|can't wait|cannot wait)\b"
    r"|^(?:i|we)\s+(?:could|can|would|will|'ll|’ll|'d|’d)\s+(?:\w+\s+)?(?:help|show|send|teach"
    r"|give|lend|bring|introduce|recommend|share|tell)\b.*\byou\b",
    re.IGNORECASE,
)
"""The talk itself ("I totally agree") or an offer to the listener ("I could help you with
…"): no fact of the speaker's world."""
_OWN = re.compile(
    r"\b(?:I|I'm|I’m|I've|I’ve|I'll|I’ll|I'd|I’d|me|my|mine|myself|we|we're|we’re|we've|us|our"
    r"|ours)\b",
    re.IGNORECASE,
)
"""The speaker speaking of themselves."""
_ANNOUNCING = re.compile(
    r"^(?:guess what|you know what|fun fact|good news|great news|big news|exciting news"
    r"|long time no (?:see|talk|chat))\s*[-–—:!,.]+\s*",
    re.IGNORECASE,
)
"""What announces the news rather than tells it: "Guess what - I got a puppy"."""
_NEWS = re.compile(
    r"^(?:i|we)\s+(?:(?:just|finally|recently|also|actually|already|officially|really|truly"
    r"|absolutely|always)\s+)*(?:got|have|had|bought|adopted|started|joined|moved|made|found|met"
    r"|won|finished|passed|signed|launched|opened|built|learned|visited|booked|became|lost|sold"
    r"|quit|left|married|graduated|applied|enrolled|hired|rescued|love|like|enjoy|prefer|hate"
    r"|adore)\s+(?!it\b|that\b|this\b|you\b|them\b|those\b|these\b)\w+\s+\w+",
    re.IGNORECASE,
)
"""News or a liking the speaker tells of themselves ("I got a puppy two weeks ago", "I love
hiking in the Alps"), which the general rule reads as talk ("I got it", "I love that")."""
_ONGOING = re.compile(
    r"^(?:i'm|i’m|i am|we're|we’re|we are|i've been|i’ve been|we've been|we’ve been)\b[^.?!]*?"
    r"\b\w{3,}ing\s+(?:at|in|for|with)\s+(?:a|an|the|my|our)?\s*\w{3,}",
    re.IGNORECASE,
)
"""What the speaker does now, somewhere or for something ("I'm volunteering at a shelter",
"I've been working at Acme"), which the general rule reads as how they are ("I'm doing …")."""
_GOAL = re.compile(
    r"^it(?:'s|’s|\s+is|\s+has|\s+was)\s+(?:(?:always|long)\s+)?(?:been\s+)?(?:a|my|our)\s+"
    r"(?:(?:big|huge|lifelong|long-time|real)\s+)?(?P<what>dream|goal|plan|wish|ambition|hope)"
    r"(?:\s+of\s+(?:mine|ours))?\s+to\s+(?=\w)",
    re.IGNORECASE,
)
"""A goal said impersonally ("It's been a dream to adopt …"): the speaker's own, which the
reaction rule would read as "It's great"."""
_LISTENER = frozenset("you your you're youre you've you'll you'd yours u ur".split())
_PRONOUN_START = frozenset("he she it they his her its their him them".split())


@dataclass(frozen=True)
class Spoken:
    """A line split into who said it (None for a plain note) and what was said."""

    speaker: str | None
    said: str


def spoken(line: str) -> Spoken:
    """`line` (one statement, no bullet) as a speaker and their words, when it opens with a
    name and a colon that are not a label ("Deadline: Friday")."""
    match = _SPEAKER.match(line)
    if match is None or match.group("name").lower().rstrip(".") in _LABELS:
        return Spoken(None, line)
    return Spoken(match.group("name"), match.group("said"))


def cleaned(text: str) -> str:
    """Without emoji, emoticons or a shared photo's caption."""
    text = _SHARED.sub("", text)
    text = "".join(
        ch
        for ch in text
        if unicodedata.category(ch) not in ("So", "Sk", "Cs", "Co", "Cf") and ch != "\ufe0f"
    )
    text = re.sub(r"\s+([.,!?;:])", r"\1", collapse(_EMOTICON.sub(" ", text)))
    return _balanced(text)


def _balanced(text: str) -> str:
    """Without closing brackets that close nothing ("Yeah!)" of an emoticon written apart)."""
    kept, depth = [], 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            if not depth:
                continue
            depth -= 1
        kept.append(ch)
    return "".join(kept)


@functools.lru_cache(maxsize=8192)
def fact_of(line: str) -> str | None:
    """The one fact `line` (a note's unit as one statement) states, in the third person when a
    speaker said it; None when it states none (see the module docstring). Kept per line: a
    sweep reads the same units in its junk filters, its known facts and both update checks."""
    turn = spoken(cleaned(line))
    if quoted := _QUOTED.match(turn.said):
        turn = Spoken(turn.speaker, quoted.group(1).strip())
    if turn.speaker is not None and turn.speaker.lower() in _ASSISTANTS:
        return None
    names = {turn.speaker} if turn.speaker else set()
    said = sentences(turn.said)
    facts = [
        (index, kept)
        for index, sentence in enumerate(said)
        if (kept := _kept(sentence, names, spoken=turn.speaker is not None))
    ]
    if not facts:
        return None
    if turn.speaker is None and len(facts) == len(said):
        return collapse(turn.said)  # a plain note that is all facts stays whole
    best = max(facts, key=lambda item: (*_weight(item[1]), -item[0]))
    chosen = [best[1]]
    if best[0] + 1 < len(said):  # "His name is Max." goes on about it
        following = _kept(said[best[0] + 1], names, spoken=False)
        if following and following.split()[0].lower() in _PRONOUN_START:
            chosen.append(following)
    text = " ".join(_terminated(sentence) for sentence in chosen)
    return third_person(text, turn.speaker) if turn.speaker else text


def _kept(sentence: str, names: set[str], *, spoken: bool) -> str | None:
    """`sentence` without its openers and a vocative name, when it states a fact; in a line
    somebody said (`spoken`), a fact of their world: it says "I", "my" or "we", or names
    someone or something ("Pottery's a great way to relax" is an opinion, "The kids look so
    cute" a reaction)."""
    text = _without_vocative(_without_openers(sentence), names)
    if not text or is_question(text) or sentence.rstrip().endswith("?"):
        return None
    if goal := _GOAL.match(text):
        text = f"It has been my {goal.group('what').lower()} to {text[goal.end() :]}"
    words = [word.lower().strip(",.!:;'’\"") for word in text.split()]
    if words[0] in SMALL_TALK_WORDS or words[0] in _LISTENER:
        return None
    if any(p.match(text) for p in (_REACTION_START, _ENCOURAGEMENT, _FEELING, _ABOUT_THE_TALK)):
        return None
    told = _NEWS.match(text) or _ONGOING.match(text) or goal
    if not is_statement_of_fact(text, min_words=NOTE_MIN_WORDS) and not told:
        return None
    if spoken:
        own = _OWN.search(text) is not None
        if _LISTENER.intersection(words) and not own:
            return None  # about the one listening: praise, advice, an offer
        if not own and not _names_something(text, names):
            return None
    return text


def _names_something(text: str, names: set[str]) -> bool:
    """A number, a calendar word, or a capitalised name after the first word that is not the
    speaker's."""
    if re.search(r"\d", text) or CALENDAR.search(text):
        return True
    return any(
        word[0].isupper() and word not in names and word not in ("I", "I'm", "I've", "I'll", "I'd")
        for word in (w.strip(",.!:;'’\"()") for w in text.split()[1:])
        if word
    )


def _without_openers(sentence: str) -> str:
    """Leading interjections, reactions and greetings dropped: "Wow, Calvin! I got …" → "I
    got …" (the name goes with `_without_vocative`)."""
    text = sentence.strip()
    while True:
        stripped = _ANNOUNCING.sub("", without_opener(text))
        words = stripped.split(maxsplit=1)
        head = words[0].lower().strip(",.!:;…-") if words else ""
        if head in SMALL_TALK_WORDS and len(words) == 2 and len(words[1].split()) >= 2:
            stripped = words[1].strip(" ,.!:;…-")
        if stripped == text:
            return text
        text = stripped


def _without_vocative(text: str, names: set[str]) -> str:
    """Without a name the sentence is addressed to: "Calvin, I moved" / "I moved, Calvin!"."""
    text = re.sub(r"^[A-ZÀ-Þ][\w'’-]*\s*[,!]\s*", "", text)
    text = re.sub(r",\s*[A-ZÀ-Þ][\w'’-]*\s*([.!]*)$", r"\1", text)
    return text.strip(" ,") if text.strip(" ,.!") else ""


def _weight(sentence: str) -> tuple[bool, bool, int]:
    """Which sentence of a line is its fact: one about the speaker ("I passed the interviews"
    over "The tank is big enough now"), not led by a pronoun ("His name is Max" needs the
    sentence before it), then the one that names the most (at most four things: a long
    sentence is not a better fact)."""
    leading = sentence.split()[0].lower()
    own = _OWN.search(sentence) is not None
    return own, leading not in _PRONOUN_START, min(4, len(concepts(sentence)))


def _terminated(sentence: str) -> str:
    sentence = sentence.strip().rstrip(",;:")
    sentence = re.sub(r"!+$", ".", sentence)
    sentence = sentence[0].upper() + sentence[1:]
    return sentence if sentence.endswith((".", "…", ")", '"')) else sentence + "."

"""Small talk: greetings, thanks, "how are you", a joke or a story asked for, and the short
acknowledgements of a chat ("ok", "lol", "sounds good").

The rule summary never lists small talk as a pending ask (`shell.lifecycle.rule_summary`), and
the demo brain answers it with a canned line, without searching memory (`shell.demo.rules`).
"""

from __future__ import annotations

import re
from typing import Literal

SmallTalk = Literal["greeting", "thanks", "how_are_you", "joke", "story", "acknowledgement"]

_POLITE = r"(?:\s+(?:there|again|all|everyone|folks|friend|buddy|cairn|so much|a lot|a bunch))*"
_KINDS: tuple[tuple[SmallTalk, re.Pattern[str]], ...] = (
    (
        "how_are_you",
        re.compile(
            r"^(?:(?:hi|hello|hey)\W+)?(?:how are you|how're you|how are things|how is it going|"
            r"how's it going|how do you do|what's up|whats up|sup)(?:\s+(?:doing|today|"
            r"this morning|this evening|tonight|now|there))*$"
        ),
    ),
    (
        "joke",
        re.compile(r"^(?:can you |could you |please )?tell me (?:a |another )?joke(?: please)?$"),
    ),
    (
        "story",
        re.compile(
            r"^(?:can you |could you |please )?tell me (?:a |another )?(?:short )?story"
            r"(?: please)?$"
        ),
    ),
    (
        "greeting",
        re.compile(
            rf"^(?:hi|hello|hey|hiya|howdy|yo|greetings|good (?:morning|afternoon|evening|day)|"
            rf"morning|evening){_POLITE}$"
        ),
    ),
    (
        "thanks",
        re.compile(
            rf"^(?:(?:ok|okay|great|cool)\W+)?(?:thanks|thank you|thx|ty|cheers|much appreciated)"
            rf"{_POLITE}(?:\W+(?:that (?:helps|helped)|for (?:that|the help|your help)))?$"
        ),
    ),
    (
        "acknowledgement",
        re.compile(
            r"^(?:ok|okay|k|cool|nice|great|lol|haha\w*|sounds good|got it|i see|sure|alright|"
            r"all right|perfect|awesome|good|fine|bye|goodbye|see you|good night|"
            r"that's (?:really |so )?(?:great|cool|nice|funny)(?: to hear)?|haha\w* .*|"
            r"(?:ok |okay )?(?:that )?makes sense(?: now)?|i am fine|i'm fine|i'm good|"
            r"i am good)(?:\W+(?:ok|okay|cool|thanks|thank you|lol))*$"
        ),
    ),
)


def small_talk(text: str) -> SmallTalk | None:
    """Which kind of small talk `text` is, or None when it asks or tells something."""
    said = re.sub(r"\s+", " ", text.strip().lower().replace("’", "'"))
    said = re.sub(r"[\s!?.,:;~)(*]+$", "", said)
    said = re.sub(r"\s*[,!]\s*", " ", said)
    if not said or len(said) > 60:
        return None
    return next((kind for kind, pattern in _KINDS if pattern.match(said)), None)

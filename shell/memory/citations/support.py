"""Whether the lines a citation names say anything of the line that cites them.

A hash vouches that the cited lines are still as they were; it must not vouch for a citation
that never matched. A small model copies the example citation of its instructions onto a fact
the user told it: Qwen2.5-Coder-1.5B wrote "staging database lives on db-stage-3.internal, port
5433 (README.md#L16)", line 16 being blank, and the hash showed it fresh at every recall. So a
citation is hashed only where the cited lines share a word with the line, outside its
citations: a name, a number, a part of an identifier, a word's stem. One that shares none is
left unhashed and said to the writer, who can cite the lines that say it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from shell.memory.citations import refs
from shell.memory.index.terms import stems
from shell.text.stop_words import STOP_WORDS

_WORD = re.compile(r"[^\W_]+")
_CITING = frozenset("see use uses used file files line lines".split())
"""Words a line says about the citation itself, not about its fact."""


def words(text: str) -> frozenset[str]:
    """The words of `text` a citation is matched by: numbers, and the Snowball stems of words of
    three letters or more that name something ("deploys" and "deployment" are one)."""
    return stems(
        [
            word
            for word in _WORD.findall(text)
            if (word.isdigit() or len(word) >= 3)
            and word.lower() not in STOP_WORDS
            and word.lower() not in _CITING
        ]
    )


def says_any_of(cited: Sequence[str], line: str) -> bool:
    """True when the `cited` lines share a word with `line` outside its citations, or `line`
    says nothing besides them (a bare list of citations)."""
    outside, end = [], 0
    for citation in refs.find(line):
        outside.append(line[end : citation.span[0]])
        end = citation.span[1]
    outside.append(line[end:])
    said = words(" ".join(outside))
    return not said or bool(said & words("\n".join(cited)))

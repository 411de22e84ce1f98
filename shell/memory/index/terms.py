"""The words of the keyword leg: the terms a query sends to BM25, and the stems they match on.

LanceDB's full-text index stems English with Snowball (the Rust `rust-stemmers` crate);
`py_rust_stemmers` binds the same crate, so a unit's own words can be matched here as the index
matches them.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from shell.memory.index.chunking import Chunk
from shell.memory.index.coherence import continues
from shell.text.stop_words import STOP_WORDS

_MAX_QUERY_TERMS = 32
_TERM = re.compile(r"\w+", re.UNICODE)


def query_terms(query: str) -> list[str]:
    """Plain word tokens of a user query, question words left out unless nothing else is left:
    no FTS syntax can pass through."""
    terms = list(dict.fromkeys(t for t in _TERM.findall(query) if len(t) <= 40))
    content = [t for t in terms if t.lower() not in STOP_WORDS]
    return (content or terms)[:_MAX_QUERY_TERMS]


def stems(words: list[str]) -> frozenset[str]:
    """The Snowball English stems of `words`, lowercased: "Payments" and "payment" share one."""
    return frozenset(_stemmer().stem_words([w.lower() for w in words]))


def found_through_context(chunk: Chunk, query_stems: frozenset[str]) -> bool:
    """True when a keyword hit on `chunk` came only from its context (the unit before it) and
    the unit does not continue that one's topic.

    The keyword leg reads a unit with the tail of the one before, so that a dialogue turn like
    "Yes, it was yesterday" is found by the words of the turn it answers. In a list of unrelated
    facts that only lends one fact's words to the next: "Tom's coffee" also found "the recycling
    goes out on Thursdays", the line after Tom's.
    """
    if not chunk.context or continues(chunk):
        return False
    return not query_stems & stems(_TERM.findall(chunk.text))


@cache
def _stemmer() -> Any:
    from py_rust_stemmers import SnowballStemmer

    return SnowballStemmer("english")

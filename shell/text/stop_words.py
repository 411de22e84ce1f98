"""The one list of English words that name no fact."""

from __future__ import annotations

STOP_WORDS = frozenset(
    """a an the of to in on at for and or but if so as by with from about into onto over under
    up than then there here this that these those it its it's i i'm me my we us our you your he
    him his she her they them their who whom whose which what whats when where why how am is
    are was were be been being do does did have has had will would shall can could should may
    might must not no yes ok okay please just also too very any some let can't don't""".split()
)
"""Articles, pronouns, auxiliaries, prepositions, conjunctions, question words and fillers.
Search drops them from a query's keywords (LanceDB drops only Lucene's 33: without these,
"what", "did" and "her" matched half of a dialogue), the demo brain from the words it matches an
answer on, compaction's check from the ask it looks for in a summary, and dreaming from a note's
concepts. Each may add words of its own; none keeps a list of these."""

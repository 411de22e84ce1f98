"""The memory lines a session was shown: the citations of an answer that none of them backs,
and the source of an answer that restates one without citing it.

The system prompt asks a model to cite only lines a memory_search or memory_get result showed
it; small models do not hold to that (Qwen2.5-Coder-1.5B wrote `Source: memory/YYYY-MM-DD.md#L…`
in 30 answers of 30). An answer's citation of a memory file is checked against every line the
session's searches and reads returned; one that none of them covers is said, beside the answer,
so that a reader never takes a made-up source for a checked one. And small models that answer
from a search result do not cite it at all (0 of 7 right answers): an answer that cites nothing
and restates a line a search showed (most of the line's words, `RESTATED`) gets that hit's
citation beside it, named by Cairn.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict

from shell.events import Event, SearchHit, SearchPerformed, ToolCallFinished
from shell.text.stop_words import STOP_WORDS

CITATION = re.compile(r"(?<![\w/.-])(MEMORY\.md|memory/[\w./-]+?\.md)#L(\d+)(?:-L?(\d+))?")
RESTATED = 0.75
"""The share of a hit line's words (beyond the question's) an answer holds, or of the answer's
words the line holds, to restate it."""
MIN_SHARED = 2
"""Words the line shares with the answer and the question together, at least."""
_WORD = re.compile(r"\w+")
_ORDINAL = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b")


class ShownLines:
    """Line ranges of memory files the session's searches and reads returned."""

    def __init__(self) -> None:
        self._ranges: dict[str, list[tuple[int, int]]] = defaultdict(list)
        self._hits: list[SearchHit] = []

    def see(self, event: Event) -> None:
        if isinstance(event, SearchPerformed):
            for hit in event.hits:
                self._ranges[hit.path].append((hit.start_line, hit.end_line))
            self._hits.extend(event.hits)
        elif isinstance(event, ToolCallFinished) and event.name == "memory_get" and not event.error:
            self._see_read(event.result)

    def _see_read(self, result: str) -> None:
        try:
            payload = json.loads(result)
            path, first, count = str(payload["path"]), int(payload["from"]), int(payload["lines"])
        except (ValueError, KeyError, TypeError):
            return
        if count > 0:
            self._ranges[path].append((first, first + count - 1))

    def unbacked(self, answer: str) -> list[str]:
        """The citations of memory lines in `answer` that no result showed, in order, once."""
        found: list[str] = []
        for match in CITATION.finditer(answer):
            first = int(match.group(2))
            last = int(match.group(3) or first)
            shown = self._ranges.get(match.group(1), [])
            if not any(start <= last and first <= end for start, end in shown):
                if match.group(0) not in found:
                    found.append(match.group(0))
        return found

    def restated(self, answer: str, question: str = "") -> tuple[str, str] | None:
        """(citation, line) of the hit line `answer` restates best, when it cites no memory
        line itself; None when it restates none. Beyond the words of `question` (an answer
        leaves out what it was asked with), the answer holds most (`RESTATED`) of what the line
        says, or what the answer says comes mostly from the line ("Your name is Ada." from
        "- My name is Ada and I live in Tromsø."). Newer hits win a tie."""
        if CITATION.search(answer):
            return None
        asked = _words(question)
        new = _words(answer) - asked
        best: tuple[float, str, str] | None = None
        for hit in reversed(self._hits):
            for line in hit.snippet.splitlines():
                words = _words(line)
                told = words - asked
                shared = len(told & new)
                if not shared or len(words & (new | asked)) < MIN_SHARED:
                    continue
                share = max(shared / len(told), shared / len(new))
                if share >= RESTATED and (best is None or share > best[0]):
                    best = (share, hit.citation, line.strip())
        return None if best is None else (best[1], best[2])


def _words(text: str) -> set[str]:
    """The words that carry meaning: not stop words, and a number or longer than two letters;
    an ordinal is its number ("December 9th" restates "9 December")."""
    return {
        word
        for word in _WORD.findall(_ORDINAL.sub(r"\1", text.lower()))
        if word not in STOP_WORDS and (len(word) > 2 or word.isdigit())
    }


def unbacked_notice(citations: list[str]) -> str:
    cited = ", ".join(citations)
    return f"Unchecked source: the answer cites {cited}, which no memory search or read showed."

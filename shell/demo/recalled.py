"""How the demo brain answers a question from what memory returned: the recalled line that
shares the most words with the question, its source, and a warning when the code it cites
changed since."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from shell.demo.messages import ToolOutcome
from shell.text import display_line
from shell.text.stop_words import STOP_WORDS

_ASKING = STOP_WORDS | {"remember", "tell", "know"}
"""Words of a question to the demo that name nothing to look for."""


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def keywords(text: str) -> set[str]:
    return {_stem(w) for w in re.findall(r"\w+", text.lower()) if w not in _ASKING}


@dataclass(frozen=True)
class Candidate:
    """One line of recalled memory, with where it came from."""

    text: str
    source: str
    """A citation such as memory/2026-03-03.md#L4."""
    warnings: tuple[str, ...] = ()
    """The tool's word on project files the line cites that changed ("[stale: Makefile#L2 …]")."""


def best_line(question: str, candidates: Iterable[Candidate]) -> tuple[Candidate, int] | None:
    """The candidate sharing the most keywords with the question (earliest wins a tie), and that
    count; None when there are no content lines at all. A line that asks a question answers
    nothing: any line that shares a keyword and is not a question comes first, as the reply
    does in a dialogue whose question echoes the user's."""
    wanted = keywords(question)
    best: tuple[Candidate, int] | None = None
    best_rank = (False, -1)
    for candidate in candidates:
        line = display_line(candidate.text)
        if not line or line.startswith("#") or set(line) <= set("-=*_ "):
            continue
        score = len(wanted & keywords(line))
        rank = (score > 0 and not line.endswith("?"), score)
        if rank > best_rank:
            best, best_rank = (candidate, score), rank
    return best


def _recall_candidates(results: Sequence[ToolOutcome]) -> Iterator[Candidate]:
    for result in results:
        payload = result.payload()
        if payload.get("nothingRelevant") is True:
            continue
        for hit in payload.get("results") or payload.get("hits") or ():
            if not isinstance(hit, dict):
                continue
            source = hit.get("citation") or (
                f"{hit.get('path')}#L{hit.get('startLine')}-L{hit.get('endLine')}"
            )
            checks = hit.get("sourceChecks") or []
            for line in str(hit.get("snippet") or "").splitlines():
                yield Candidate(line, str(source), _warnings(line, checks))
        if isinstance(text := payload.get("text"), str):
            first = payload.get("from")
            first = first if isinstance(first, int) and first > 0 else 1
            checks = payload.get("sourceChecks") or []
            for at, line in enumerate(text.splitlines(), first):
                yield Candidate(line, f"{payload.get('path')}#L{at}", _warnings(line, checks))


def _warnings(line: str, checks: Sequence[object]) -> tuple[str, ...]:
    """The `[mark: citation …]` checks saying a citation on `line` is stale or gone."""
    split = [(str(c), str(c).strip("[]").partition(": ")) for c in checks]
    return tuple(
        c
        for c, (mark, _, rest) in split
        if mark in ("stale", "gone") and rest.split(" ", 1)[0].rstrip(":") in line
    )


def recall_answer(question: str, results: Sequence[ToolOutcome]) -> str:
    found = best_line(question, _recall_candidates(results))
    if found is None:
        return "I checked my memory and found nothing about that."
    candidate, score = found
    line = display_line(candidate.text)
    if score == 0:
        return (
            "I checked my memory and found nothing that clearly answers that. "
            f"The closest note: {line}\n\nSource: {candidate.source}"
        )
    answer = f"From memory: {line}\n\nSource: {candidate.source}"
    if candidate.warnings:
        answer += f"\n\nBut the code it cites has changed: {' '.join(candidate.warnings)}"
    return answer

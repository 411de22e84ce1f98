"""The memory lines a session was shown, and the citations of an answer that none of them backs.

The system prompt asks a model to cite only lines a memory_search or memory_get result showed
it; small models do not hold to that (Qwen2.5-Coder-1.5B wrote `Source: memory/YYYY-MM-DD.md#L…`
in 30 answers of 30). An answer's citation of a memory file is checked against every line the
session's searches and reads returned; one that none of them covers is said, beside the answer,
so that a reader never takes a made-up source for a checked one.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict

from shell.events import Event, SearchPerformed, ToolCallFinished

CITATION = re.compile(r"(?<![\w/.-])(MEMORY\.md|memory/[\w./-]+?\.md)#L(\d+)(?:-L?(\d+))?")


class ShownLines:
    """Line ranges of memory files the session's searches and reads returned."""

    def __init__(self) -> None:
        self._ranges: dict[str, list[tuple[int, int]]] = defaultdict(list)

    def see(self, event: Event) -> None:
        if isinstance(event, SearchPerformed):
            for hit in event.hits:
                self._ranges[hit.path].append((hit.start_line, hit.end_line))
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


def unbacked_notice(citations: list[str]) -> str:
    cited = ", ".join(citations)
    return f"Unchecked source: the answer cites {cited}, which no memory search or read showed."

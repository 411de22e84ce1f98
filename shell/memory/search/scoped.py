"""memory_search over every memory a session reads, each hit labelled with its scope.

Each scope keeps its own index and hit log (dreaming counts a scope's recalls in that scope
alone); the hits are merged by relevance. A hit from another scope than the session's own
loses every line holding a secret on the way, and goes when nothing else is left.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from shell.events import Event, SearchHit
from shell.memory.search.result import SearchResult
from shell.scopes.crossing import without_secret_lines
from shell.scopes.scopes import Scope, Scopes

if TYPE_CHECKING:
    from shell.memory.index.memory_index import MemoryIndex
    from shell.memory.search.pipeline import MemorySearch


class ScopeRecall(Protocol):
    """What the search needs of one scope's recall (`shell.memory.service.RecallService`)."""

    @property
    def index(self) -> MemoryIndex: ...

    @property
    def searcher(self) -> MemorySearch: ...

    def before_search(self) -> list[Event]: ...


class ScopedSearch:
    """The `Searcher` of `memory_search` for a session with several scopes."""

    def __init__(self, scopes: Scopes, recalls: Sequence[tuple[Scope, ScopeRecall]]) -> None:
        self._scopes = scopes
        self._recalls = tuple(recalls)

    @property
    def index(self) -> MemoryIndex:
        """The session's own index (whether it is stale qualifies the answer)."""
        return self._recalls[0][1].index

    def before_search(self) -> list[Event]:
        """Each scope's index caught up before a search (`RecallService.before_search`)."""
        return [event for _, recall in self._recalls for event in recall.before_search()]

    def search(self, query: str, *, max_results: int, min_score: float) -> SearchResult:
        results = [
            (scope, recall.searcher.search(query, max_results=max_results, min_score=min_score))
            for scope, recall in self._recalls
        ]
        hits = [
            labelled
            for scope, result in results
            for hit in result.hits
            if (labelled := self._labelled(scope, hit)) is not None
        ]
        hits.sort(key=lambda hit: -hit.score)
        own = results[0][1]
        degraded = [f"{s.label}: {r.degraded_reason}" for s, r in results if r.degraded_reason]
        bests = [r.best_score for _, r in results if r.best_score is not None]
        timings: dict[str, float] = {}
        for _, result in results:
            for step, ms in result.timings_ms.items():
                timings[step] = timings.get(step, 0.0) + ms
        return replace(
            own,
            hits=hits[:max_results],
            degraded_reason="; ".join(degraded) or None,
            nothing_relevant=not hits,
            timings_ms=timings,
            best_score=max(bests) if bests else None,
            keyword_matched=any(r.keyword_matched for _, r in results),
        )

    def _labelled(self, scope: Scope, hit: SearchHit) -> SearchHit | None:
        """`hit` with its scope; from another scope, without the lines holding a secret."""
        if not self._scopes.crosses(scope):
            return replace(hit, scope=scope.label)
        snippet = without_secret_lines(hit.snippet)
        if not snippet.strip():
            return None
        return replace(hit, scope=scope.label, snippet=snippet)

"""How the ranked units of one memory search become the hits it cites.

Best first, each unit is grown into its window (`shell.memory.search.windows.FileViews`); a unit
that an earlier hit's window already cites adds nothing, and a window whose words repeat a chosen
one's (`ranking.DUPLICATE_JACCARD`) is dropped as a near-duplicate. Each window left becomes one
`SearchHit` with its citation, its note's date and whether that date is in the time the query names.
`memory_search` (`shell.memory.search.pipeline`) ranks; this module cites.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from shell.events import SearchHit
from shell.memory.paths import note_date
from shell.memory.search import ranking
from shell.memory.search.windows import FileViews

if TYPE_CHECKING:
    from shell.memory.index.chunking import Chunk


def cite(
    ranked: Sequence[tuple[float, bool, ranking.Scored, Chunk]],
    files: FileViews,
    max_results: int,
    reranked: Mapping[str, float] | None = None,
) -> list[SearchHit]:
    """Best first, each hit's unit grown into its window; a unit an earlier hit cites adds
    nothing, and a window repeating a chosen one's words is dropped. `reranked`: the
    cross-encoder's relevance by chunk id, shown on the hits it read."""
    hits: list[SearchHit] = []
    chosen: list[frozenset[str]] = []
    for _, framed, scored, chunk in ranked:
        cited = files.claim(chunk)
        if cited is None:  # an earlier hit cites this unit already
            continue
        text = "\n".join(unit.text for unit in cited)
        words = ranking.word_tokens(text)
        if any(ranking.jaccard(words, other) >= ranking.DUPLICATE_JACCARD for other in chosen):
            continue  # a near-duplicate of a better hit
        files.take(cited)
        chosen.append(words)
        hits.append(_hit(scored, cited, text, framed, (reranked or {}).get(scored.chunk_id)))
        if len(hits) == max_results:
            break
    return hits


def _hit(
    scored: ranking.Scored,
    cited: Sequence[Chunk],
    text: str,
    framed: bool,
    rerank_score: float | None,
) -> SearchHit:
    path, start, end = cited[0].path, cited[0].start_line, cited[-1].end_line
    day = note_date(path)
    return SearchHit(
        path=path,
        start_line=start,
        end_line=end,
        score=scored.score,
        vector_score=scored.vector_score,
        text_score=scored.text_score,
        snippet=text,
        citation=ranking.citation(path, start, end),
        date=day.isoformat() if day else None,
        in_time_frame=framed,
        unit=scored.chunk_id,
        rerank_score=rerank_score,
    )

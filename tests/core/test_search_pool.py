"""memory_search over purpose-built indexes (hash embedder, planted cosines): the candidate pool
and a keyword match past it, a lost full-text index, and an empty index."""

from __future__ import annotations

from pathlib import Path

import pytest

from shell.memory.index.memory_index import MemoryIndex
from shell.memory.search.pipeline import MemorySearch
from tests.core.search_helpers import NOW, paths, write_notes


def zephyr_index(workspace: Path, cosines: list[float], seed: int) -> MemoryIndex:
    """Filler notes and, last, the one note that names "zephyr", each at the given cosine to the
    query "zephyr" (`memory/topic-NNN.md`, numbered in that order)."""
    import numpy as np

    from shell.memory.index.chunking import make_chunk
    from shell.memory.index.embed import HashEmbedder

    embedder = HashEmbedder()
    query = embedder.embed_query("zephyr")
    rng = np.random.default_rng(seed)

    def at_cosine(cosine: float) -> np.ndarray:
        noise = rng.standard_normal(embedder.dim).astype(np.float32)
        noise -= noise.dot(query) * query
        noise /= np.linalg.norm(noise)
        return cosine * query + np.sqrt(1 - cosine**2) * noise

    texts = [f"filler note number {i} about nothing much" for i in range(len(cosines) - 1)]
    texts.append("the zephyr release train leaves on fridays")
    chunks = [make_chunk(f"memory/topic-{i:03d}.md", 1, 1, text) for i, text in enumerate(texts)]
    memory_index = MemoryIndex(workspace, embedder)
    memory_index.add_synthetic(chunks, np.stack([at_cosine(c) for c in cosines]))
    return memory_index


def test_the_candidate_pool_does_not_shrink_with_max_results(tmp_path: Path) -> None:
    """OpenClaw #134604: with a pool of maxResults × 4, a chunk ranked 42nd by cosine but the only
    keyword match was seen by one leg at maxResults=1 and by both at 10, so the top hit changed."""
    cosines = [0.60, *[0.55 - 0.1 * i / 39 for i in range(40)], 0.44]
    searcher = MemorySearch(zephyr_index(tmp_path, cosines, seed=7), clock=lambda: NOW)

    tops = {k: searcher.search("zephyr", max_results=k).hits for k in (1, 6, 50)}
    assert tops[1][0].path == "memory/topic-041.md"  # 0.7·0.44 + 0.3·bm25 beats 0.7·0.60
    assert tops[1][0].vector_score == pytest.approx(0.44, abs=1e-3)
    assert tops[6][:1] == tops[1] and tops[50][:6] == tops[6]


def test_a_keyword_match_past_the_vector_pool_keeps_its_cosine(tmp_path: Path) -> None:
    """A unit the vector leg did not return still has a cosine. Counted as 0, the one note that
    names "zephyr" got relevance 0.3·bm25 alone, under min_score, and the search abstained."""
    from shell.memory.search.pipeline import CANDIDATE_POOL

    fillers = CANDIDATE_POOL + 20
    cosines = [*[0.49 - 0.04 * i / (fillers - 1) for i in range(fillers)], 0.42]
    searcher = MemorySearch(zephyr_index(tmp_path, cosines, seed=11), clock=lambda: NOW)

    result = searcher.search("zephyr", max_results=3)
    assert result.hits[0].path == f"memory/topic-{fillers:03d}.md"
    assert result.hits[0].vector_score == pytest.approx(0.42, abs=1e-3)


def test_a_lost_full_text_index_is_reported_as_vector_only(tmp_path: Path) -> None:
    """A failed FTS query raises KeywordSearchUnavailable: search says vector-only, not hybrid."""
    import shutil

    from shell.memory.index.embed import HashEmbedder

    write_notes(tmp_path, {"memory/a.md": "- the zephyr release train leaves on fridays\n"})
    MemoryIndex(tmp_path, HashEmbedder()).sync(trigger="manual")
    for folder in (tmp_path / ".cairn" / "index").rglob("_indices"):
        shutil.rmtree(folder)  # the FTS files are gone; the vectors are intact

    reopened = MemoryIndex(tmp_path, HashEmbedder())
    searcher = MemorySearch(reopened, clock=lambda: NOW)
    result = searcher.search("zephyr")
    assert result.mode == "vector-only"
    assert result.degraded_reason is not None and "keyword" in result.degraded_reason
    assert paths(result) == ["memory/a.md"]

    reopened.sync(trigger="manual")  # the next sync rebuilds the full-text index
    repaired = searcher.search("zephyr", min_score=0.0)
    assert repaired.mode == "hybrid" and repaired.degraded_reason is None
    assert repaired.hits[0].text_score > 0


def test_an_empty_index_abstains_and_says_why(tmp_path: Path) -> None:
    from shell.memory.index.embed import HashEmbedder

    memory_index = MemoryIndex(tmp_path, HashEmbedder())
    memory_index.sync(trigger="manual")
    result = MemorySearch(memory_index, clock=lambda: NOW).search("anything at all")
    assert result.nothing_relevant and result.hits == []
    assert result.best_score is None
    assert "may be empty" in result.to_model_json()["note"]

"""The two legs of a search, run side by side: the keyword leg (LanceDB's BM25, whose Rust code
runs without the GIL) in a worker thread while this thread embeds the query and takes its
cosine top-k over the RAM matrix. Each leg fails on its own: the search degrades to the other."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from shell.memory.index.reader import KeywordSearchUnavailable
from shell.memory.search.request import describe_error

if TYPE_CHECKING:
    from shell.memory.index.memory_index import MemoryIndex

_KEYWORD_LEGS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="cairn-keyword-leg")


@dataclass
class Legs:
    """What each leg found, as (chunk id, score) pairs best first, or why it failed."""

    qvec: np.ndarray | None = None
    vector: list[tuple[str, float]] = field(default_factory=list)
    vector_error: str | None = None
    keyword: list[tuple[str, float]] = field(default_factory=list)
    keyword_error: str | None = None
    timings: dict[str, float] = field(default_factory=dict)
    """Milliseconds: "embed", "vector" and "keyword" (the legs overlap)."""


def run_legs(index: MemoryIndex, query: str, pool: int) -> Legs:
    """Both legs for `query`, `pool` candidates each."""
    keyword = _KEYWORD_LEGS.submit(_keyword_leg, index, query, pool)
    legs = _vector_leg(index, query, pool)
    legs.keyword, legs.keyword_error, legs.timings["keyword"] = keyword.result()
    return legs


def _vector_leg(index: MemoryIndex, query: str, pool: int) -> Legs:
    legs = Legs()
    started = time.perf_counter()
    try:
        qvec = np.asarray(index.embedder.embed_query(query), dtype=np.float32)
    except Exception as error:  # a missing or broken model degrades, never crashes
        legs.vector_error = f"the embedder failed ({describe_error(error)})"
        return legs
    finally:
        legs.timings["embed"] = _ms_since(started)
    started = time.perf_counter()
    try:
        legs.vector = index.vector_candidates(qvec, pool)
        legs.qvec = qvec
    except Exception as error:
        legs.vector_error = f"vector search failed ({describe_error(error)})"
    finally:
        legs.timings["vector"] = _ms_since(started)
    return legs


def _keyword_leg(
    index: MemoryIndex, query: str, pool: int
) -> tuple[list[tuple[str, float]], str | None, float]:
    started = time.perf_counter()
    try:
        return index.keyword_candidates(query, pool), None, _ms_since(started)
    except KeywordSearchUnavailable as error:  # the FTS index is lost; a sync rebuilds it
        return [], f"keyword leg unavailable ({error.reason})", _ms_since(started)
    except Exception as error:
        return [], f"keyword search failed ({describe_error(error)})", _ms_since(started)


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000

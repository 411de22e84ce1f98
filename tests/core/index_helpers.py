"""Helpers for the index sync tests: an embedder that counts what it embeds, daily notes to
index, an index over them, and what it holds."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from shell.events import IndexSynced
from shell.memory.index.embed import HashEmbedder
from shell.memory.index.memory_index import MemoryIndex


class CountingEmbedder:
    """The real HashEmbedder, recording every text it is asked to embed."""

    def __init__(self) -> None:
        self._inner = HashEmbedder()
        self.name = self._inner.name
        self.dim = self._inner.dim
        self.texts: list[str] = []
        self.fail = False

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.fail:
            raise RuntimeError("model crashed")
        self.texts.extend(texts)
        return self._inner.embed(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._inner.embed_query(text)


def daily(day: int, lines: int = 30) -> str:
    return "".join(
        f"- {day}: fact number {i} about project {i % 5} and its owner\n" for i in range(lines)
    )


def make_index(workspace: Path, embedder: CountingEmbedder, **kwargs: int) -> MemoryIndex:
    return MemoryIndex(
        workspace,
        embedder,
        chunk_tokens=kwargs.get("chunk_tokens", 60),
        context_tokens=kwargs.get("context_tokens", 10),
    )


def paths_in(index: MemoryIndex) -> set[str]:
    hits = index.vector_candidates(index.embedder.embed_query("fact"), 10_000)
    return {chunk.path for chunk in index.chunks([h for h, _ in hits]).values()}


def synced(events: list) -> IndexSynced:
    assert isinstance(events[-1], IndexSynced)
    return events[-1]

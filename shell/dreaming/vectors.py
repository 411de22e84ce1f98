"""Vectors dreaming compares, kept in `.cairn/dreams/vectors.npz`: the bare statements of
MEMORY.md's lines and of candidates (by text, so a sweep embeds only what is new) and the notes'
units (by their hash, so a sweep need not open the index, `notes`).

The index's vectors are no use for this: they carry the heading above each unit, which pulls
every MEMORY.md line toward its section's name (a paraphrase of a known fact scored 0.858 against
its line instead of 0.976, and was proposed again). Derived and git-ignored like the rest of
dreaming's state; a file that cannot be read is rebuilt.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

from shell.fsio import write_atomically


class StatementVectors:
    """Args:
    file: where the vectors are kept.
    model: the embedder's name: vectors of another model are never reused.
    dim: the embedder's dimension: a file of another shape is rebuilt.
    embed: texts to unit-norm rows (called only for texts not kept).
    """

    def __init__(
        self, file: Path, model: str, dim: int, embed: Callable[[list[str]], np.ndarray]
    ) -> None:
        self._file = file
        self._model = model
        self._dim = dim
        self._embed = embed
        self._kept = self._load()
        self._loaded = set(self._kept)
        self._used: dict[str, np.ndarray] = {}

    def of(self, texts: Sequence[str]) -> np.ndarray:
        """One unit-norm row per text, in order."""
        keys = [self._key(text) for text in texts]
        missing = {
            key: text for key, text in zip(keys, texts, strict=True) if key not in self._kept
        }
        if missing:
            rows = np.asarray(self._embed(list(missing.values())), dtype=np.float32)
            self._kept.update(zip(missing, rows, strict=True))
        for key in keys:
            self._used[key] = self._kept[key]
        if not keys:
            return np.zeros((0, 1), dtype=np.float32)
        return np.stack([self._kept[key] for key in keys])

    def related(self, a: str, b: str) -> float:
        """The cosine of two texts."""
        pair = self.of([a, b])
        return float(pair[0] @ pair[1])

    def kept(self, keys: Iterable[str]) -> dict[str, np.ndarray]:
        """The kept vectors of `keys` (a unit's hash), marked as used."""
        found = {key: self._kept[key] for key in keys if key in self._kept}
        self._used.update(found)
        return found

    def keep(self, vectors: dict[str, np.ndarray]) -> None:
        """Keep vectors under keys of the caller's (a unit's hash)."""
        self._kept.update(vectors)
        self._used.update(vectors)

    def save(self) -> None:
        """Keep the vectors this sweep used (and only those), when any was new or dropped."""
        if self._used.keys() == self._loaded:
            return
        buffer = io.BytesIO()
        keys = sorted(self._used)
        matrix = np.stack([self._used[k] for k in keys]) if keys else np.zeros((0, 1), np.float32)
        np.savez(buffer, keys=np.array(keys), vectors=matrix, model=np.array(self._model))
        self._file.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(self._file, buffer.getvalue(), mode=0o600)

    def _key(self, text: str) -> str:
        return hashlib.sha1(text.encode("utf-8")).hexdigest()

    def _load(self) -> dict[str, np.ndarray]:
        """The kept vectors, or none when the file is missing, of another model or shape, or
        cannot be read (it is derived: the sweep embeds again and writes it whole)."""
        try:
            with np.load(self._file, allow_pickle=False) as data:
                keys, vectors = data["keys"], data["vectors"]
                if str(data["model"]) != self._model:
                    return {}
                if vectors.ndim != 2 or vectors.shape != (len(keys), self._dim):
                    return {}
                if not np.isfinite(vectors).all():
                    return {}
                return dict(zip((str(k) for k in keys), vectors.astype(np.float32), strict=True))
        except (OSError, ValueError, KeyError, TypeError, EOFError):
            return {}

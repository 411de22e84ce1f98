"""The core never loads the UI, and loads the heavy libraries only when it needs them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CORE_MODULES = [
    "shell",
    "shell.agent",
    "shell.headless.commands",
    "shell.events",
    "shell.model",
    "shell.memory.service",
    "shell.memory.search.pipeline",
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


def test_a_search_from_the_shell_never_loads_litellm(tmp_path: Path) -> None:
    """`cairn search` pays for the index and the embedder, not for the model client."""
    code = (
        "import io, sys\n"
        f"import os; os.makedirs({str(tmp_path / 'ws')!r})\n"
        "from shell.config import load_settings\n"
        "from shell.headless.search import search_command\n"
        f"settings = load_settings({{'workspace': {str(tmp_path / 'ws')!r}}})\n"
        "search_command(settings, 'deploy', k=3, as_json=True, out=io.StringIO())\n"
        "print(sorted(m for m in ('litellm', 'openai', 'lancedb') if m in sys.modules))\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert output.stdout.split("\n")[-2] == "['lancedb']"


def test_the_tuis_first_frame_waits_for_neither_the_agent_nor_markdown() -> None:
    """What `cairn` imports before its first frame: the agent is built after it
    (`widgets.source.AgentPlan`), Markdown comes with the first answer or pane, the keys panel
    when it is opened."""
    code = (
        "import sys, widgets.cli, widgets.app, widgets.source, shell.context.budget\n"
        "later = ('shell.build', 'shell.agent', 'git', 'litellm', 'lancedb', 'markdown_it',"
        " 'textual.widgets._markdown', 'textual.widgets._help_panel')\n"
        "print([m for m in later if m in sys.modules])\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert output.stdout.strip() == "[]"


def test_memory_commits_and_a_revert_run_git_without_gitpython(tmp_path: Path) -> None:
    """Every git command goes through `shell.git.runner`: GitPython is never loaded."""
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from shell.git.history import MemoryHistory\n"
        "from shell.git.store import GitStore\n"
        "from shell.sync import SyncEngine\n"
        f"root = Path({str(tmp_path / 'ws')!r})\n"
        "store = GitStore(root)\n"
        "store.ensure_repo()\n"
        "(root / 'MEMORY.md').write_text('- tea\\n')\n"
        "sha = store.commit(['MEMORY.md'], 'memory(tool): tea').sha\n"
        "store.committed('MEMORY.md'), store.log(), store.line_times('MEMORY.md')\n"
        "assert MemoryHistory(store).revert(sha).sha\n"
        "SyncEngine(root, author_name='C', author_email='c@h').status()\n"
        "print('git' in sys.modules)\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert output.stdout.strip() == "False"

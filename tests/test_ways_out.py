"""Every module that writes a file is one of the known ways out, each with what keeps it so: a
new writer must go through a door (`shell.secrets.door` for what Cairn keeps outside memory,
`shell.memory.files` for memory, `shell.tools.project.pinned` for the project) or say here why
it need not."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

WRITERS = {
    "shell/secrets/door.py": "the door: redacted, 0600 files in 0700 folders",
    "shell/fsio.py": "the durable write and the lock files (0600), under the doors",
    "shell/memory/files/swap.py": "memory files, behind the memory door and its secrets policy",
    "shell/memory/hit_log.py": "query hashes and line numbers only, 0600",
    "shell/memory/index/store.py": "the index's records of memory's own text, 0600 in 0700",
    "shell/dreaming/state.py": "proposals redacted when made (shell.dreaming.sweep), 0600",
    "shell/dreaming/vectors.py": "vectors of memory's own text under sha1 keys, no text, 0600",
    "shell/forget.py": "the tombstone file: sha256 hashes and word counts, never the text",
    "shell/memory/forget/state.py": ".cairn/ files without a forgotten line, their modes kept",
    "shell/tools/project/pinned.py": "the project's files, what the model wrote there",
    "shell/workspace.py": "the seed files, Cairn's own text",
    "shell/git/history.py": "a revert's journal: two commit ids",
    "shell/tools/mcp/hub.py": "the MCP SDK's warnings, in a file the door made 0600 first",
    "widgets/theme_choice.py": "the theme's name, in the config folder",
    "widgets/cli.py": "stdout onto /dev/null",
    "shell/tools/project/cgroup.py": "numbers into the kernel's cgroup files (limits, pids)",
}
"""Module → why what it writes holds no secret Cairn found, or is not Cairn's to redact."""
PACKAGES = {
    "shell/sync/": "the sync's state and git's own files; what leaves is scanned (push_scan)",
}


def _writes(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in {"write_text", "write_bytes", "write_atomically", "FileHandler"}:
            return True
        if (
            name == "open"
            and isinstance(func, ast.Attribute)
            and getattr(func.value, "id", "") == "os"
        ):
            return True
        if name == "open" and any(
            _writing_mode(arg) for arg in [*node.args, *(k.value for k in node.keywords)]
        ):
            return True
    return False


def _writing_mode(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and bool(set(node.value) & set("wax"))
        and set(node.value) <= set("rwaxbt+")
    )


def test_every_file_writer_is_a_known_way_out() -> None:
    found = {
        path.relative_to(ROOT).as_posix()
        for folder in ("shell", "widgets", "themes")
        for path in (ROOT / folder).rglob("*.py")
        if _writes(ast.parse(path.read_text(encoding="utf-8")))
    }
    unlisted = {
        name for name in found - WRITERS.keys() if not any(name.startswith(p) for p in PACKAGES)
    }
    assert unlisted == set(), (
        f"{sorted(unlisted)} write files: route them through shell.secrets.door (redacted, "
        "private) or a door of their kind, or add them to WRITERS with why"
    )
    assert WRITERS.keys() - found == set(), "stale entries in WRITERS"

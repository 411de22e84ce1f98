"""The project file tools: read_file, list_files, grep, edit_file and write_file.

They work inside one `ProjectRoot`, whose `resolve` checks every path the model gives. Reads
run freely; writes are approved with their diff first, and refused over a file the model has
not read, or that changed since it did (one `ReadLedger` shared by the five). Listing and
searching use ripgrep when it is found (`find_rg`), else `pathspec` and `git grep`.
"""

from __future__ import annotations

import os
import shutil
import sysconfig
from enum import Enum
from pathlib import Path

from shell.tools.project.editing import edit_tools
from shell.tools.project.ledger import ReadLedger
from shell.tools.project.listing import list_tool
from shell.tools.project.outputs import OutputStore
from shell.tools.project.reading import read_tool
from shell.tools.project.root import ProjectRoot
from shell.tools.project.searching import grep_tool
from shell.tools.toolbox import Tool


def find_rg() -> str | None:
    """The `rg` binary: the one the `ripgrep` wheel put beside this interpreter's scripts,
    else the first on PATH, else None."""
    scripts = sysconfig.get_path("scripts")
    if scripts:
        beside = Path(scripts) / ("rg.exe" if os.name == "nt" else "rg")
        if beside.is_file() and os.access(beside, os.X_OK):
            return str(beside)
    return shutil.which("rg")


class _Rg(Enum):
    FIND = "find"


def file_tools(
    root: ProjectRoot, outputs: OutputStore, *, rg: str | _Rg | None = _Rg.FIND
) -> list[Tool]:
    """The five project file tools over `root`.

    Args:
        root: The project folder; every path goes through its checks.
        outputs: Where cut outputs are kept, for read_file("output:<call id>").
        rg: The ripgrep binary; by default `find_rg()`'s; None uses the fallbacks.
    """
    binary = find_rg() if rg is _Rg.FIND else rg
    ledger = ReadLedger()
    return [
        read_tool(root, outputs, ledger),
        list_tool(root, binary),
        grep_tool(root, binary),
        *edit_tools(root, ledger),
    ]

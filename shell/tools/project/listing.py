"""list_files: the project's files that git would not ignore, bounded.

With rg, `rg --files` (it honours .gitignore, nested ones, .ignore and git's excludes); without
it, the folder is walked by `os.walk` and each file checked by `pathspec`'s gitignore matcher,
one per folder that holds a .gitignore or .ignore, the nearest deciding. Hidden files count;
`.git` never does. Either way the paths come sorted and at most `MAX_LISTED` are returned,
with the total.
"""

from __future__ import annotations

import asyncio
import heapq
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pathspec

from shell.tools.project.globs import Scope, scope
from shell.tools.project.root import ProjectRoot
from shell.tools.project.searched import Confirmation, search_target
from shell.tools.project.streaming import stream_lines
from shell.tools.toolbox import CallContext, Tool, ToolError, ToolResult, json_result

MAX_LISTED = 500
TIMEOUT_S = 30.0
IGNORE_FILES = (".gitignore", ".ignore")

LIST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "glob": {
            "type": "string",
            "maxLength": 500,
            "description": "Only paths matching this .gitignore-style glob, relative to `path`: "
            "'*.py' (any depth), 'src/**/*.ts', 'docs/*'.",
        },
        "path": {
            "type": "string",
            "maxLength": 1000,
            "description": "A folder to list, relative to the project (default: all of it).",
        },
    },
    "additionalProperties": False,
}

LIST_DESCRIPTION = (
    "List the files of the project folder (paths relative to it), sorted, skipping what "
    ".gitignore ignores and .git. Bounded: at most 500 paths, with the total; narrow a long "
    "listing with `glob` or `path`."
)

_Chain = tuple[tuple[str, pathspec.GitIgnoreSpec], ...]
"""The ignore rules that apply in a folder: (folder relative to the project, its rules)."""


def list_tool(root: ProjectRoot, rg: str | None) -> Tool:
    """The list_files tool: with `rg` when given, else the `pathspec` walk."""

    async def run(arguments: dict[str, Any], context: CallContext) -> ToolResult:
        glob = arguments.get("glob") or None
        found = scope(root, arguments.get("path") or None, glob)
        if rg is not None:
            files, total, stopped = await _list_rg(rg, root, found, context)
        else:
            files, total = await asyncio.to_thread(_list_walk, root.folder, found)
            stopped = ""
        confirmed = await asyncio.to_thread(_confirmed, root, files)
        files, total = confirmed, total - (len(files) - len(confirmed))
        payload: dict[str, Any] = {"path": found.shown, "files": files, "total": total}
        if glob:
            payload["glob"] = glob
        if total > len(files):
            payload["note"] = (
                f"[{len(files)} of {total} files shown; narrow the listing with a glob (e.g. "
                "'src/**/*.py') or a path.]"
            )
        elif not files:
            payload["note"] = "[No files match (ignored files are not listed).]"
        if stopped:
            payload["note"] = f"[{stopped}] " + payload.get("note", "")
        return json_result(payload)

    return Tool("list_files", LIST_DESCRIPTION, LIST_SCHEMA, run, source="project")


async def _list_rg(
    rg: str, root: ProjectRoot, found: Scope, context: CallContext
) -> tuple[list[str], int, str]:
    argv = [rg, "--no-config", "--files", "--hidden", "--no-require-git", "--glob", "!.git"]
    with search_target(root, found) as target:

        def accept(line: str) -> str | None:
            path = target.project_path(line) if line else ""
            return path if path and found.matches(path) else None

        streamed = await stream_lines(
            [*argv, "--sort", "path", "--", target.arg],
            cwd=target.cwd,
            keep=MAX_LISTED,
            accept=accept,
            time_limit=TIMEOUT_S,
            cancelled=context.cancelled,
            pass_fds=target.pass_fds,
        )
    if streamed.exit_code == 2 and not streamed.total:
        raise ToolError(f"listing failed: {' '.join(streamed.stderr.split())[:500]}")
    stopped = {
        "exited": "",
        "timeout": f"Listing stopped after {TIMEOUT_S:.0f} s: the counts are partial.",
        "cancelled": "Listing cancelled: the counts are partial.",
    }[streamed.ended]
    return streamed.kept, streamed.total, stopped


def _confirmed(root: ProjectRoot, files: list[str]) -> list[str]:
    """The listed files that are files inside, reached by no symlink (`Confirmation`): names
    seen through a folder swapped for a link mid-walk are dropped, and counted out."""
    confirmation = Confirmation(root)
    return [file for file in files if confirmation.file(file)]


def _list_walk(folder: Path, found: Scope) -> tuple[list[str], int]:
    total = 0

    def counted(paths: Iterable[str]) -> Iterator[str]:
        nonlocal total
        for path in paths:
            total += 1
            yield path

    files = walk_files(folder, found.path) if found.is_dir else [found.shown]
    kept = heapq.nsmallest(MAX_LISTED, counted(filter(found.matches, files)), key=_order)
    return kept, total


def walk_files(folder: Path, start: Path) -> Iterator[str]:
    """The files under `start` (inside `folder`) that the ignore files do not ignore, as paths
    relative to `folder`, in no particular order. Symlinked folders are not followed."""
    chain: _Chain = ()
    for ancestor in reversed(start.relative_to(folder).parents):
        chain = _with_rules(chain, folder / ancestor, _rel(ancestor))
    inside = _rel(start.relative_to(folder))
    if inside != "." and _ignored(chain, inside, is_dir=True):
        chain = ()  # an ignored folder named outright is listed, as rg does
    chain = _with_rules(chain, start, inside)
    chains = {start: chain}
    for here, folders, names in os.walk(start):
        where = Path(here)
        chain = chains.pop(where)
        base = _rel(where.relative_to(folder))
        kept_folders = []
        for name in folders:
            rel = _join(base, name)
            if name != ".git" and not _ignored(chain, rel, is_dir=True):
                kept_folders.append(name)
                chains[where / name] = _with_rules(chain, where / name, rel)
        folders[:] = kept_folders
        for name in names:
            rel = _join(base, name)
            if not _ignored(chain, rel, is_dir=False):
                yield rel


def _with_rules(chain: _Chain, where: Path, rel: str) -> _Chain:
    lines: list[str] = []
    for name in IGNORE_FILES:  # .ignore after .gitignore: it wins, as in rg
        try:
            lines += (where / name).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
    if not lines:
        return chain
    return (*chain, (rel, pathspec.GitIgnoreSpec.from_lines(_usable(lines))))


def _usable(lines: list[str]) -> Iterator[str]:
    """The lines pathspec accepts (git skips a malformed one, and so do we)."""
    for line in lines:
        try:
            pathspec.GitIgnoreSpec.from_lines([line])
        except ValueError:
            continue
        yield line


def _ignored(chain: _Chain, rel: str, *, is_dir: bool) -> bool:
    for base, rules in reversed(chain):  # the nearest ignore file that has a say decides
        inside = rel if base == "." else rel.removeprefix(base + "/")
        verdict = rules.check_file(inside + "/" if is_dir else inside).include
        if verdict is not None:
            return verdict
    return False


def _rel(path: Path) -> str:
    return path.as_posix() or "."


def _join(base: str, name: str) -> str:
    return name if base == "." else f"{base}/{name}"


def _order(path: str) -> list[str]:
    return path.split("/")

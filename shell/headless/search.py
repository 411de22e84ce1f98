"""`cairn search` and `cairn index`: the memory index from the shell; no model is called.

    cairn search QUERY [--json] [-k N]      search memory as memory_search does
    cairn index [--status | --rebuild]      inspect or rebuild the derived index
    cairn index --stale [--json]            memory lines whose cited project lines changed

Both bring the index up to date with the memory files first (but `index --status` and
`index --stale`, which read the memory files and the project folder alone).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

from shell.config import ConfigError, Settings, project_folder
from shell.events import Error
from shell.headless.options import Subcommands, add_workspace, inherited
from shell.headless.output import Out
from shell.headless.progress import ProgressLines
from shell.memory.search.request import DEFAULT_MAX_RESULTS, MAX_RESULTS_LIMIT
from shell.secrets.door import event_line


def add_search_parser(sub: Subcommands) -> None:
    search = sub.add_parser(
        "search",
        help="search memory",
        description="Search the memory files as the agent's memory_search does, by meaning and "
        "by exact tokens; no model is called.",
    )
    add_workspace(search, inherit=True)
    search.add_argument(
        "query",
        nargs="+",
        help="what to look for: plain words, or exact tokens such as a ticket id or a hash "
        "(several words form one query)",
    )
    search.add_argument(
        "--json",
        action="store_true",
        help="print the result as JSON (mode, hits with path, lines, scores and snippet)",
    )
    search.add_argument(
        "-k",
        type=int,
        default=DEFAULT_MAX_RESULTS,
        metavar="N",
        help=f"number of hits, 1 to {MAX_RESULTS_LIMIT} (default {DEFAULT_MAX_RESULTS})",
    )
    _add_project(search, "the project folder the hits' citations of files are checked against")


def add_index_parser(sub: Subcommands) -> None:
    index = sub.add_parser(
        "index",
        help="inspect or rebuild the memory index",
        description="With no option, bring the index up to date with the memory files.",
    )
    add_workspace(index, inherit=True)
    group = index.add_mutually_exclusive_group()
    group.add_argument(
        "--status", action="store_true", help="report what the index holds; change nothing"
    )
    group.add_argument(
        "--rebuild", action="store_true", help="drop the index and build it again from the files"
    )
    group.add_argument(
        "--stale",
        action="store_true",
        help="list the memory lines citing project lines (path#L12@hash) that changed (stale) "
        "or are missing (gone) in the project folder now",
    )
    index.add_argument("--json", action="store_true", help="with --stale: print JSON")
    _add_project(index, "with --stale: the project folder the citations name")


def _add_project(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--project",
        type=Path,
        help=f"{what} (default: the current folder)",
        **inherited(True),  # `cairn --project D search …` keeps D
    )


def _with_project(settings: Settings, args: argparse.Namespace) -> Settings:
    """`settings` with the project folder `--project` names, else the current folder."""
    return replace(settings, project=project_folder(getattr(args, "project", None) or Path.cwd()))


def run_search(settings: Settings, args: argparse.Namespace, out: Out) -> int:
    if not 1 <= args.k <= MAX_RESULTS_LIMIT:
        raise ConfigError(f"-k must be between 1 and {MAX_RESULTS_LIMIT}")
    settings = _with_project(settings, args)
    return search_command(settings, " ".join(args.query), k=args.k, as_json=args.json, out=out)


def run_index(settings: Settings, args: argparse.Namespace, out: Out) -> int:
    if args.stale:
        return stale_command(_with_project(settings, args), as_json=args.json, out=out)
    action = "status" if args.status else "rebuild" if args.rebuild else "sync"
    return index_command(settings, action=action, out=out)


def search_command(settings: Settings, query: str, *, k: int, as_json: bool, out: Out) -> int:
    from shell.memory.service import RecallService
    from shell.readonly import read_only
    from shell.workspace import READ_ONLY, existing_workspace

    existing_workspace(settings)
    service = RecallService(settings, on_progress=ProgressLines())
    service.sync("manual")
    result = service.searcher.search(query, max_results=k)
    service.index.close()
    if as_json:
        out.write(json.dumps(result.to_model_json(), ensure_ascii=False, indent=2) + "\n")
        return 0
    out.write(f"{result.answered_by} search for {query!r}")
    out.write(f" (degraded: {result.degraded_reason})\n" if result.degraded_reason else "\n")
    if read_only(settings.workspace):
        out.write(READ_ONLY + ".\n")
    if frame := result.time_frame:
        out.write(f"time named: {frame.text!r}, {frame.start} to {frame.end} (ranked first)\n")
    if result.nothing_relevant or not result.hits:
        out.write("Memory holds nothing relevant to this query.\n")
        return 0
    for hit in result.hits:
        snippet = " ".join(hit.snippet.split())[:160]
        rerank = f", rerank {hit.rerank_score:.2f}" if hit.rerank_score is not None else ""
        out.write(
            f"{hit.score:.3f}  {hit.citation}  "
            f"(vector {hit.vector_score:.2f}, text {hit.text_score:.2f}{rerank})\n"
            f"       {snippet}\n"
        )
        for check in hit.citations:
            out.write(f"       [{check.mark}: {check.reason}]\n")
    return 0


def index_command(settings: Settings, *, action: str, out: Out) -> int:
    """`cairn index`: "status" reports, "sync" catches up with the files, "rebuild" starts over.
    Events (sync, rebuild) go out as JSON lines, then the index status."""
    from shell.memory.service import RecallService
    from shell.workspace import existing_workspace

    existing_workspace(settings)
    progress = ProgressLines()
    service = RecallService(settings, on_progress=progress)
    match action:
        case "sync":
            events = service.sync("manual")
        case "rebuild":
            events = service.index.rebuild("manual", progress=progress)
        case _:
            events = []
    for event in events:
        out.write(event_line(event) + "\n")
    status = service.index.status()
    service.index.close()
    out.write(json.dumps(status, default=str, indent=2) + "\n")
    return 1 if any(isinstance(e, Error) for e in events) else 0


def stale_command(settings: Settings, *, as_json: bool, out: Out) -> int:
    """`cairn index --stale`: each memory line whose citation of a project file is stale or
    gone, as `file:line  citation  mark  why` (or JSON); exit code 0 either way."""
    from shell.memory.citations.project import project_root
    from shell.memory.citations.scan import checked_lines
    from shell.memory.citations.source import ProjectSource
    from shell.workspace import existing_workspace

    existing_workspace(settings)
    found = checked_lines(settings.workspace, ProjectSource(project_root(settings)))
    if as_json:
        rows = [
            {
                "path": c.path,
                "line": c.line,
                "citation": c.check.citation,
                "mark": c.check.mark,
                "reason": c.check.reason,
                "movedTo": c.check.moved_to or None,
                "text": c.text,
            }
            for c in found
        ]
        out.write(json.dumps({"project": str(settings.project), "lines": rows}, indent=2) + "\n")
        return 0
    out.write(f"citations of {settings.project} in memory that no longer hold: {len(found)}\n")
    for c in found:
        out.write(f"{c.path}:{c.line}  {c.check.citation}  {c.check.mark}  {c.check.reason}\n")
    return 0

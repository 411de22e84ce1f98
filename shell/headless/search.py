"""`cairn search` and `cairn index`: the memory index from the shell; no model is called.

    cairn search QUERY [--json] [-k N] [--scope S]      search memory as memory_search does
    cairn index [--status | --rebuild] [--scope S]      inspect or rebuild the derived index
    cairn index --stale [--json] [--scope S]            memory lines citing lines that changed

Both bring the index up to date with the memory files first (but `index --status` and
`index --stale`, which read the memory files and the project folder alone), each memory
`--scope` names (`shell.headless.scoped`) in turn. `--project` (default: the current folder) is
the project whose memory a scope names and whose files the citations are checked against.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from typing import TYPE_CHECKING

from shell.config import ConfigError, Settings
from shell.events import Error
from shell.headless.options import Subcommands, add_workspace
from shell.headless.output import Out
from shell.headless.progress import ProgressLines
from shell.headless.scoped import add_scope_options, chosen_scopes, scoped_settings
from shell.memory.describe import capped_notice
from shell.memory.search.request import DEFAULT_MAX_RESULTS, MAX_RESULTS_LIMIT
from shell.scopes.scopes import Scope, Scopes, scope_settings
from shell.secrets.door import event_line

if TYPE_CHECKING:
    from shell.memory.service import RecallService


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
    add_scope_options(search)


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
    add_scope_options(index)


def run_search(settings: Settings, args: argparse.Namespace, out: Out) -> int:
    if not 1 <= args.k <= MAX_RESULTS_LIMIT:
        raise ConfigError(f"-k must be between 1 and {MAX_RESULTS_LIMIT}")
    query = " ".join(args.query)
    settings = scoped_settings(settings, args)
    return search_command(settings, query, k=args.k, as_json=args.json, out=out, scope=args.scope)


def run_index(settings: Settings, args: argparse.Namespace, out: Out) -> int:
    if args.stale:
        scoped = scoped_settings(settings, args)
        return stale_command(scoped, as_json=args.json, out=out, scope=args.scope)
    action = "status" if args.status else "rebuild" if args.rebuild else "sync"
    return index_command(scoped_settings(settings, args), action=action, out=out, scope=args.scope)


def recalls_of(
    settings: Settings, scopes: Scopes, chosen: list[Scope], progress: ProgressLines | None
) -> list[tuple[Scope, RecallService]]:
    """A recall for each chosen scope's workspace (each must exist); only the session's own
    keeps a hit log, so no query of a project is stored in another memory's state."""
    from shell.memory.service import RecallService
    from shell.workspace import existing_workspace

    recalls = []
    for scope in chosen:
        here = scope_settings(settings, scope)
        existing_workspace(here)
        if scope != scopes.own:
            here = replace(here, dreaming=replace(here.dreaming, enabled=False))
        recalls.append((scope, RecallService(here, on_progress=progress, scope=scope.label)))
    return recalls


def search_command(
    settings: Settings, query: str, *, k: int, as_json: bool, out: Out, scope: str = "all"
) -> int:
    """`cairn search`: `scope` "global", "project" or "all" (`shell.headless.scoped`) of the
    project `settings` names (none: the global memory alone)."""
    from shell.memory.search.result import DEFAULT_MIN_SCORE
    from shell.memory.search.scoped import ScopedSearch
    from shell.readonly import read_only
    from shell.workspace import READ_ONLY

    scopes, chosen = chosen_scopes(settings, scope)
    recalls = recalls_of(settings, scopes, chosen, ProgressLines())
    for _, recall in recalls:
        recall.sync("manual")
    result = ScopedSearch(scopes, recalls).search(query, max_results=k, min_score=DEFAULT_MIN_SCORE)
    capped = [file for _, recall in recalls for file in recall.index.capped()]
    for _, recall in recalls:
        recall.index.close()
    labelled = any(s.kind == "project" for s in chosen)
    if as_json:
        out.write(json.dumps(result.to_model_json(), ensure_ascii=False, indent=2) + "\n")
        return 0
    out.write(f"{result.answered_by} search for {query!r}")
    out.write(f" (degraded: {result.degraded_reason})\n" if result.degraded_reason else "\n")
    if labelled:
        out.write("searched: " + ", ".join(s.label for s in chosen) + "\n")
    if any(read_only(s.workspace) for s in chosen):
        out.write(READ_ONLY + ".\n")
    if capped:
        out.write(capped_notice(capped) + "\n")
    if frame := result.time_frame:
        out.write(f"time named: {frame.text!r}, {frame.start} to {frame.end} (ranked first)\n")
    if result.nothing_relevant or not result.hits:
        out.write("Memory holds nothing relevant to this query.\n")
        return 0
    for hit in result.hits:
        snippet = " ".join(hit.snippet.split())[:160]
        rerank = f", rerank {hit.rerank_score:.2f}" if hit.rerank_score is not None else ""
        where = f"[{hit.scope}] " if labelled else ""
        out.write(
            f"{hit.score:.3f}  {where}{hit.citation}  "
            f"(vector {hit.vector_score:.2f}, text {hit.text_score:.2f}{rerank})\n"
            f"       {snippet}\n"
        )
        for check in hit.citations:
            out.write(f"       [{check.mark}: {check.reason}]\n")
    return 0


def index_command(settings: Settings, *, action: str, out: Out, scope: str = "all") -> int:
    """`cairn index`: "status" reports, "sync" catches up with the files, "rebuild" starts over,
    for each memory `scope` names. Events (sync, rebuild) go out as JSON lines, then the index
    status (with its scope, when there are several)."""
    scopes, chosen = chosen_scopes(settings, scope, shared=False)
    progress = ProgressLines()
    failed = False
    for named, service in recalls_of(settings, scopes, chosen, progress):
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
        if len(chosen) > 1 or named.kind == "project":
            status = {"scope": named.label, **status}
        out.write(json.dumps(status, default=str, indent=2) + "\n")
        failed = failed or any(isinstance(e, Error) for e in events)
    return 1 if failed else 0


def stale_command(settings: Settings, *, as_json: bool, out: Out, scope: str = "all") -> int:
    """`cairn index --stale`: each line of the memories `scope` names whose citation of a
    project file is stale or gone, as `file:line  citation  mark  why` (or JSON); exit code 0
    either way."""
    from shell.memory.citations.project import project_root
    from shell.memory.citations.scan import checked_lines
    from shell.memory.citations.source import ProjectSource

    _, chosen = chosen_scopes(settings, scope, shared=False)
    source = ProjectSource(project_root(settings))
    found = [(named, c) for named in chosen for c in checked_lines(named.workspace, source)]
    if as_json:
        rows = [
            {
                "scope": named.label,
                "path": c.path,
                "line": c.line,
                "citation": c.check.citation,
                "mark": c.check.mark,
                "reason": c.check.reason,
                "movedTo": c.check.moved_to or None,
                "text": c.text,
            }
            for named, c in found
        ]
        out.write(json.dumps({"project": str(settings.project), "lines": rows}, indent=2) + "\n")
        return 0
    out.write(f"citations of {settings.project} in memory that no longer hold: {len(found)}\n")
    for named, c in found:
        where = f"[{named.label}] " if named.kind == "project" else ""
        check = c.check
        out.write(f"{where}{c.path}:{c.line}  {check.citation}  {check.mark}  {check.reason}\n")
    return 0

"""grep: a regex over the project's files that git would not ignore, bounded.

With rg as a subprocess; without it, `git grep --no-index --exclude-standard` (POSIX extended
regexes there, Rust's with rg; git's ignore rules only, so `.ignore` files count with rg
alone). Either way at most `MAX_MATCHES` matching lines are kept, each cut to `MAX_COLUMNS`
characters, and every matching line is counted as the output streams.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shell.tools.project.globs import Scope, plain_text, scope
from shell.tools.project.root import ProjectRoot
from shell.tools.project.searched import Confirmation, Target, search_target
from shell.tools.project.streaming import Streamed, stream_lines
from shell.tools.toolbox import CallContext, Tool, ToolError, ToolResult, json_result

MAX_MATCHES = 200
MAX_COLUMNS = 300
TIMEOUT_S = 30.0

GREP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {
            "type": "string",
            "minLength": 1,
            "maxLength": 1000,
            "description": "A regular expression (e.g. 'def \\w+_tool', 'TODO|FIXME').",
        },
        "glob": {
            "type": "string",
            "maxLength": 500,
            "description": "Only files matching this .gitignore-style glob, relative to `path`: "
            "'*.py' (any depth), 'src/**/*.ts'.",
        },
        "path": {
            "type": "string",
            "maxLength": 1000,
            "description": "A folder or file to search, relative to the project (default: all).",
        },
        "ignore_case": {"type": "boolean", "default": False},
    },
    "required": ["pattern"],
    "additionalProperties": False,
}

GREP_DESCRIPTION = (
    "Search the project's files for a regular expression; returns matching lines as "
    "path:line:text, skipping what .gitignore ignores, binary files and .git. Bounded: at most "
    "200 matching lines, with the total; narrow with `glob` or `path`."
)


def grep_tool(root: ProjectRoot, rg: str | None) -> Tool:
    """The grep tool: with `rg` when given, else git grep."""

    async def run(arguments: dict[str, Any], context: CallContext) -> ToolResult:
        glob = arguments.get("glob") or None
        found = scope(root, arguments.get("path") or None, glob)
        pattern = plain_text(arguments["pattern"], "the pattern")
        ignore_case = bool(arguments.get("ignore_case", False))
        confirmation = Confirmation(root)
        try:
            if rg is None:
                streamed = await stream_lines(
                    _git_argv(pattern, found, ignore_case),
                    cwd=root.folder,
                    keep=MAX_MATCHES,
                    accept=_parse_git(found, confirmation),
                    time_limit=TIMEOUT_S,
                    cancelled=context.cancelled,
                )
            else:
                with search_target(root, found) as target:
                    streamed = await stream_lines(
                        _rg_argv(rg, pattern, target.arg, ignore_case),
                        cwd=target.cwd,
                        keep=MAX_MATCHES,
                        accept=_parse_rg(found, target, confirmation),
                        time_limit=TIMEOUT_S,
                        cancelled=context.cancelled,
                        pass_fds=target.pass_fds,
                    )
        finally:
            confirmation.close()
        return json_result(_payload(pattern, glob, found, streamed))

    return Tool("grep", GREP_DESCRIPTION, GREP_SCHEMA, run, source="project")


def _rg_argv(rg: str, pattern: str, searched: str, ignore_case: bool) -> list[str]:
    argv = [rg, "--no-config", "--line-number", "--no-heading", "--with-filename", "--null"]
    argv += ["--color", "never", "--max-columns", str(MAX_COLUMNS), "--max-columns-preview"]
    argv += ["--hidden", "--no-require-git", "--glob", "!.git"]
    if ignore_case:
        argv.append("--ignore-case")
    return [*argv, "--regexp", pattern, "--", searched]


def _git_argv(pattern: str, found: Scope, ignore_case: bool) -> list[str]:
    argv = ["git", "-c", "core.quotePath=false", "grep", "--no-index", "--exclude-standard"]
    argv += ["--line-number", "--extended-regexp", "-I", "-z", "--no-color"]
    if ignore_case:
        argv.append("--ignore-case")
    argv += ["-e", pattern, "--"]
    return argv if found.shown == "." else [*argv, f":(literal){found.shown}"]


def _parse_rg(
    found: Scope, target: Target, confirmation: Confirmation
) -> Callable[[str], str | None]:
    def accept(line: str) -> str | None:
        path, _, rest = line.partition("\0")  # rg: path NUL line:text
        path = target.project_path(path)
        number, _, text = rest.partition(":")
        if not found.matches(path) or not _confirmed(confirmation, path, number, text):
            return None
        return f"{path}:{rest}"

    return accept


def _parse_git(found: Scope, confirmation: Confirmation) -> Callable[[str], str | None]:
    def accept(line: str) -> str | None:
        path, _, rest = line.partition("\0")  # git: path NUL line NUL text
        number, _, text = rest.partition("\0")
        if not found.matches(path) or not _confirmed(confirmation, path, number, text):
            return None
        if len(text) > MAX_COLUMNS:
            text = text[:MAX_COLUMNS] + " [… line cut]"
        return f"{path}:{number}:{text}"

    return accept


def _confirmed(confirmation: Confirmation, path: str, number: str, text: str) -> bool:
    return number.isdigit() and confirmation.line(path, int(number), text)


def _payload(pattern: str, glob: str | None, found: Scope, streamed: Streamed) -> dict[str, Any]:
    if streamed.exit_code not in (0, 1, None) and not streamed.total:
        reason = " ".join(streamed.stderr.split())[:500] or f"exit code {streamed.exit_code}"
        raise ToolError(f"the search failed (is the pattern a valid regex?): {reason}")
    payload: dict[str, Any] = {"pattern": pattern, "path": found.shown}
    if glob:
        payload["glob"] = glob
    payload |= {"matchingLines": streamed.total, "text": "\n".join(streamed.kept)}
    notes = []
    if streamed.ended != "exited":
        why = "was cancelled" if streamed.ended == "cancelled" else f"took over {TIMEOUT_S:.0f} s"
        notes.append(f"The search {why} and was stopped: the results are partial.")
    if streamed.total > len(streamed.kept):
        notes.append(
            f"{len(streamed.kept)} of {streamed.total} matching lines shown; narrow the search "
            "with a more specific pattern, a glob or a path."
        )
    elif not streamed.total:
        notes.append("No matches (ignored and binary files are not searched).")
    if notes:
        payload["note"] = "[" + " ".join(notes) + "]"
    return payload

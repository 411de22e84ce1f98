"""`cairn` at its edges: a reader that closes the pipe early, and every subcommand's --help."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from tests.e2e.test_cli import cairn, started
from widgets.cli import FAMILIES, build_parser

PROGRESS = re.compile(r"cairn: (embedding|indexing) [\d,]+/[\d,]+ ")


def closed_early(args: list[str], home: Path, lines: int) -> tuple[int, str]:
    """Run `cairn` with stdout read for `lines` lines, then closed, as `| head -N` does."""
    process = started(*args, home=home)
    assert process.stdout is not None and process.stderr is not None
    for _ in range(lines):
        assert process.stdout.readline()
    process.stdout.close()
    stderr = process.stderr.read().decode()
    return process.wait(timeout=300), stderr


@pytest.mark.parametrize(
    ("args", "lines"),
    [
        (["run", "--workspace", "{ws}", "hello", "remember that the gate code is 4412"], 1),
        (["search", "--workspace", "{ws}", "gate code"], 0),
    ],
    ids=["run-head-1", "search-head-0"],
)
def test_a_closed_pipe_ends_quietly(tmp_path: Path, args: list[str], lines: int) -> None:
    ws = tmp_path / "ws"
    seeded = cairn("init", str(ws), home=tmp_path)
    assert seeded.returncode == 0, seeded.stderr
    for _ in range(50):  # enough output that the writer meets the closed pipe
        (ws / "memory" / "2026-01-01.md").open("a").write("- the gate code opens the gate\n")

    code, stderr = closed_early([a.replace("{ws}", str(ws)) for a in args], tmp_path, lines)

    # An index sync slowed past a second by a loaded machine says how far it got; nothing else.
    said = [line for line in stderr.splitlines() if not PROGRESS.match(line)]
    assert (code, said) == (141, [])


@pytest.mark.parametrize(
    ("command", "expected", "absent"),
    [
        ("search", ["query", "what to look for", "--json", "print the result as JSON", "-k N"],
         ["--model", "--api-base", "--context-window", "--demo", "--session"]),
        ("index", ["--status", "--rebuild", "report what", "drop the index"],
         ["--model", "--demo", "--session"]),
        ("init", ["directory", "the folder to seed"], ["--model", "--demo", "--session"]),
        ("replay", ["trace_file", "a trace written by --trace", "--step"], ["--model", "--demo"]),
        ("run", ["--model", "--demo", "--session", "--flush", "--compact", "messages"], []),
        ("dream", ["--model", "--apply", "--reject", "--edit", "--json"], ["--session"]),
        ("forget", ["FILE:LINE", "--text", "--yes", "--json"], ["--model", "--demo", "--session"]),
    ],
)  # fmt: skip
def test_each_subcommand_help_explains_only_its_own_arguments(
    tmp_path: Path, command: str, expected: list[str], absent: list[str]
) -> None:
    result = cairn(command, "--help", home=tmp_path)

    assert result.returncode == 0, result.stderr
    assert all(text in result.stdout for text in expected), result.stdout
    assert not [flag for flag in absent if flag in result.stdout], result.stdout
    [parser] = [
        action.choices[command]
        for action in build_parser()._actions
        if isinstance(action, argparse._SubParsersAction)
    ]
    assert [a.dest for a in parser._actions if not a.help] == []  # every argument explained


def test_every_subcommand_the_parser_knows_runs_one_way() -> None:
    """What `dispatch` relies on: each parsed subcommand names exactly one runner."""
    [subcommands] = [
        action
        for action in build_parser()._actions
        if isinstance(action, argparse._SubParsersAction)
    ]
    runners = [name for family in FAMILIES for name in family.runs]

    assert list(subcommands.choices) == runners


@pytest.mark.parametrize("command", [["search", "coffee"], ["index", "--status"]])
def test_a_read_command_refuses_a_workspace_that_does_not_exist(
    tmp_path: Path, command: list[str]
) -> None:
    typo = tmp_path / "wrokspace"
    done = cairn(command[0], "--workspace", str(typo), *command[1:], home=tmp_path)
    assert done.returncode == 2
    assert f"cairn: error: no workspace at {typo}" in done.stderr
    assert not typo.exists()  # never made, never seeded


def test_index_stale_reads_the_project_it_is_given(tmp_path: Path) -> None:
    from shell.memory.citations import refs

    project, ws = tmp_path / "project", tmp_path / "ws"
    project.mkdir()
    ws.mkdir()
    (project / "Makefile").write_text("test:\n\tpytest -q\n")
    kept = refs.digest(["test:"])
    (ws / "MEMORY.md").write_text(f"- make test (Makefile#L1@{kept}) runs Makefile#L2@00000000\n")
    done = cairn(
        "index", "--workspace", str(ws), "--stale", "--json", "--project", str(project),
        home=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)["lines"]
    assert (row["path"], row["line"], row["citation"], row["mark"]) == (
        "MEMORY.md",
        1,
        "Makefile#L2",
        "stale",
    )


def test_search_prints_each_hit_s_citation_marks(tmp_path: Path) -> None:
    from shell.memory.citations import refs

    project, ws = tmp_path / "project", tmp_path / "ws"
    project.mkdir()
    ws.mkdir()
    (project / "Makefile").write_text("test:\n\tpytest -q\n")
    old = refs.digest(["\tmake check"])
    (ws / "MEMORY.md").write_text(f"- the deploy tests run with make (Makefile#L2@{old})\n")
    for where in (["--project", str(project), "search"], ["search", "--project", str(project)]):
        done = cairn("--workspace", str(ws), *where, "deploy tests", home=tmp_path)
        assert done.returncode == 0, done.stderr
        assert "[stale: Makefile#L2 changed since this was written]" in done.stdout


def test_dream_with_a_project_proposes_a_stale_line_re_cited_and_applies_it(
    tmp_path: Path,
) -> None:
    from shell.memory.citations import refs

    project, ws = tmp_path / "project", tmp_path / "ws"
    project.mkdir()
    assert cairn("init", str(ws), home=tmp_path).returncode == 0
    (project / "Makefile").write_text("test:\n\tmake check\n")
    old = refs.digest(["\tmake test-all"])
    memory = ws / "MEMORY.md"
    memory.write_text(memory.read_text() + f"- Tests run with make test-all (Makefile#L2@{old})\n")
    where = ("--workspace", str(ws), "--project", str(project))
    assert (
        '"dream_proposed"'
        not in cairn("dream", "--workspace", str(ws), "--json", home=tmp_path).stdout
    )
    swept = cairn("dream", *where, "--json", home=tmp_path)
    assert swept.returncode == 0, swept.stderr
    [proposed] = [
        e for e in map(json.loads, swept.stdout.splitlines()) if e["type"] == "dream_proposed"
    ]
    proposal = proposed["proposal"]
    assert proposal["kind"] == "update" and proposal["text"] == "Tests run with make test-all"
    assert "it now reads: “make check”" in proposal["reason"]
    applied = cairn(
        "dream", *where, "--edit", proposal["id"], "Tests run with make check", home=tmp_path
    )
    assert applied.returncode == 0, applied.stdout + applied.stderr
    fresh = refs.digest(["\tmake check"])
    assert f"- Tests run with make check — Source: Makefile#L2@{fresh}" in memory.read_text()

"""What the headless commands print holds no terminal escape, whoever wrote it: a memory file, an
MCP server's tool description, a commit made elsewhere. The words stay, and `--json` stays the
same JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.test_cli import cairn, events_of

ESCAPES = {
    "clipboard": "\x1b]52;c;aGk=\x07",  # OSC 52 writes the clipboard
    "title": "\x1b]0;owned\x07",
    "concealed": "\x1b[8m",  # SGR 8: what follows is hidden
    "moved": "\x1b[2A\x1b[10C",
    "erased": "\x1b[2J\x1b[K",
    "csi": "\x9b2J",  # the 8-bit CSI
    "reversed": "\u202e",  # Trojan Source
    "bell": "\x07",
    "backspace": "\b\b\b",
    "overwritten": "\r",
}
"""Each kind of escape, after the word that must still be seen."""
LINE = "- codewords: " + " ".join(f"{word}{escape}" for word, escape in ESCAPES.items()) + "end"
"""One line that every kind of escape follows a word of (each kind, where it shows in a snippet:
`cairn search` cuts a hit to its first 160 characters)."""
DEPLOY = "- Our deploy window is Friday 14:00\x1b]52;c;aGk=\x07, ask \u202eMarta\x9b2J first."
OBEYED = ("\x1b", "\x07", "\x9b", "\u202e", "\b", "\r")


def assert_inert(text: str) -> None:
    assert not [char for char in OBEYED if char in text], repr(text)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    home = tmp_path_factory.mktemp("home")
    ws = home / "ws"
    seeded = cairn("init", str(ws), home=home)
    assert seeded.returncode == 0, seeded.stderr
    (ws / "memory" / "2026-01-05.md").write_text(f"# Notes\n\n{LINE}\n", encoding="utf-8")
    (ws / "memory" / "2026-01-06.md").write_text(f"# Notes\n\n{DEPLOY}\n", encoding="utf-8")
    return home, ws


def test_cairn_search_prints_the_words_and_no_escape(workspace: tuple[Path, Path]) -> None:
    home, ws = workspace
    searched = cairn("search", "--workspace", str(ws), "-k", "10", "codeword", home=home)
    assert searched.returncode == 0, searched.stderr
    assert_inert(searched.stdout)
    assert (
        "- codewords: clipboard title concealed moved erased csi\\u009b2J reversed\\u202e bell "
        "backspace overwritten end"  # C1 and bidi controls shown as JSON writes them, not obeyed
    ) in searched.stdout


def test_cairn_search_json_is_the_same_json(workspace: tuple[Path, Path]) -> None:
    home, ws = workspace
    searched = cairn("search", "--json", "--workspace", str(ws), "-k", "10", "codeword", home=home)
    assert searched.returncode == 0, searched.stderr
    assert_inert(searched.stdout)
    hits = json.loads(searched.stdout)["results"]
    assert LINE in [hit["snippet"] for hit in hits if hit["path"] == "memory/2026-01-05.md"]


def test_cairn_run_prints_exact_json_lines(workspace: tuple[Path, Path]) -> None:
    home, ws = workspace
    ran = cairn("run", "--demo", "--workspace", str(ws), "when is our deploy window?", home=home)
    assert ran.returncode == 0, ran.stderr
    assert_inert(ran.stdout)
    [searched] = [event for event in events_of(ran) if event["type"] == "search_performed"]
    assert DEPLOY in [hit["snippet"] for hit in searched["hits"]]


def test_cairn_history_prints_a_commit_subject_made_elsewhere(workspace: tuple[Path, Path]) -> None:
    home, ws = workspace
    (ws / "MEMORY.md").write_text("# Memory\n\n- synced from another machine\n", encoding="utf-8")
    git = ["git", "-C", str(ws), "-c", "user.name=x", "-c", "user.email=x@example.com"]
    subprocess.run([*git, "add", "MEMORY.md"], check=True)
    subject = f"synced{ESCAPES['title']} {ESCAPES['clipboard']}from afar\u202e"
    subprocess.run([*git, "commit", "-q", "--no-verify", "-m", subject], check=True)

    listed = cairn("history", "--workspace", str(ws), home=home)
    as_json = cairn("history", "--json", "--workspace", str(ws), home=home)

    assert listed.returncode == 0, listed.stderr
    assert_inert(listed.stdout)
    assert "synced from afar\\u202e" in listed.stdout
    assert_inert(as_json.stdout)
    assert json.loads(as_json.stdout.splitlines()[0])["subject"] == subject


FAKE_SERVER = str(Path(__file__).parents[1] / "fakes" / "mcp_server.py")


def test_cairn_tools_prints_an_mcp_description_without_its_escapes(tmp_path: Path) -> None:
    from tests.fakes.mcp_server import SHADY

    (tmp_path / "none.toml").write_text(  # the config file `cairn(…, home=…)` points to
        f"[mcp.fake]\ncommand = {json.dumps(sys.executable)}\n"
        f'args = [{json.dumps(FAKE_SERVER)}, "escapes"]\n',
        encoding="utf-8",
    )
    ws = str(tmp_path / "ws")
    listed = cairn("tools", "--workspace", ws, home=tmp_path)
    as_json = cairn("tools", "--json", "--workspace", ws, home=tmp_path)

    assert listed.returncode == 0, listed.stderr
    assert_inert(listed.stdout)
    [line] = [line for line in listed.stdout.splitlines() if "Shady tool." in line]
    for word in ESCAPES:
        assert word in line
    assert "hiddenconcealed" in line  # SGR 8 is gone: the hidden word shows
    assert as_json.returncode == 0, as_json.stderr
    assert_inert(as_json.stdout)
    tools = {tool["name"]: tool for tool in json.loads(as_json.stdout)["tools"]}
    assert tools["fake__shady"]["description"] == f"[fake] {SHADY}"


def test_an_error_line_holds_no_escape(tmp_path: Path) -> None:
    missing = tmp_path / "no\x1b]0;owned\x07where"
    refused = cairn(
        "tools", "--workspace", str(tmp_path / "ws"), "--project", str(missing), home=tmp_path
    )
    assert refused.returncode == 2
    assert_inert(refused.stderr)
    assert f"{tmp_path}/nowhere is not a folder" in refused.stderr  # the title set is gone


@pytest.mark.parametrize(
    "argv",
    [
        ("init",),
        ("run", "hi"),
        ("search", "hi"),
        ("index",),
        ("dream",),
        ("history",),
        ("revert", "abc1234"),
        ("tools",),
        ("remote", "add", "/elsewhere"),
        ("sync",),
    ],
)
def test_every_headless_command_prints_through_the_filter(
    argv: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shell.headless.output import Printable
    from widgets import cli

    given: list[object] = []
    monkeypatch.chdir(tmp_path)
    for family in cli.FAMILIES:
        for name in family.runs:
            monkeypatch.setitem(family.runs, name, lambda _s, _a, out: given.append(out) or 0)
    assert cli.dispatch(cli.build_parser().parse_args([*argv, "--workspace", str(tmp_path)])) == 0
    assert [type(out) for out in given] == [Printable]

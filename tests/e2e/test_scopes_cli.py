"""Scopes as a user meets them, in real `cairn` processes on the demo brain: a fact remembered
in one project folder is in that project's memory, found by `cairn search` there and never
in another folder; `--scope` picks the memory `search`, `index`, `history` and `dream` read."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.test_cli import cairn, events_of, of

SCOPES_ON = {"CAIRN_SCOPES_ENABLED": "on"}


def test_a_fact_remembered_in_one_project_stays_in_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    heron, osprey = tmp_path / "heron", tmp_path / "osprey"
    heron.mkdir()
    osprey.mkdir()
    common = ("--workspace", str(ws))
    done = cairn(
        "run",
        *common,
        "--project",
        str(heron),
        "remember that the heron staging database is on port 6543",
        home=tmp_path,
        **SCOPES_ON,
    )
    assert done.returncode == 0, done.stderr
    [written] = of(events_of(done), "memory_written")
    assert written["scope"] == "project:heron"
    [project_memory] = (tmp_path / "ws-projects").glob("heron-*")
    assert "6543" in (project_memory / written["path"]).read_text()
    assert not list(ws.glob("memory/*.md"))  # nothing of it in the global memory

    def search(project: Path, *args: str) -> dict:
        found = cairn(
            "search", *common, "--project", str(project), "--json", *args,
            "staging database port", home=tmp_path, **SCOPES_ON,
        )  # fmt: skip
        assert found.returncode == 0, found.stderr
        return json.loads(found.stdout)

    here = search(heron)["results"]
    assert here and here[0]["scope"] == "project:heron" and "6543" in here[0]["snippet"]
    assert "6543" not in json.dumps(search(heron, "--scope", "global"))
    assert "6543" not in json.dumps(search(osprey))
    refused = cairn(
        "search", *common, "--project", str(osprey), "--scope", "project", "port",
        home=tmp_path, **SCOPES_ON,
    )  # fmt: skip
    assert refused.returncode != 0 and "no memory for the project" in refused.stderr
    assert not list((tmp_path / "ws-projects").glob("osprey-*"))  # reading made none

    history = cairn(
        "history", *common, "--project", str(heron), "--json", home=tmp_path, **SCOPES_ON
    )
    commits = [json.loads(line) for line in history.stdout.splitlines()]
    assert {c["scope"] for c in commits} == {"project:heron", "global"}
    assert any("memory/" in " ".join(c["files"]) for c in commits if c["scope"] != "global")
    indexed = cairn(
        "index", *common, "--project", str(heron), "--scope", "project", "--status",
        home=tmp_path, **SCOPES_ON,
    )  # fmt: skip
    assert indexed.returncode == 0 and '"scope": "project:heron"' in indexed.stdout

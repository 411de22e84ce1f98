"""`cairn why` as a user runs it, after two headless turns: the line names its session, turn,
prompt and call, `--json` carries the same, `--turn` lists the turn's writes, and a place that
is no line of a memory file is a one-line error."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.test_cli import cairn, events_of


def test_why_traces_a_line_to_its_turn_and_a_turn_to_its_writes(tmp_path: Path) -> None:
    workspace = str(tmp_path / "ws")
    ran = cairn(
        "run",
        "--demo",
        "--workspace",
        workspace,
        "remember that I prefer tea over coffee",
        "remember that the deploy key rotates on Fridays",
        home=tmp_path,
    )
    assert ran.returncode == 0, ran.stderr
    events = events_of(ran)
    session = next(e["session_id"] for e in events if e["type"] == "turn_started")
    (note, *_) = [e["path"] for e in events if e["type"] == "memory_written"]
    second = [e["commit"] for e in events if e["type"] == "memory_written"][1]

    shown = cairn("why", f"{note}:2", "--workspace", workspace, home=tmp_path)
    as_json = cairn("why", f"{note}#L2", "--json", "--workspace", workspace, home=tmp_path)
    turn = cairn("why", "--turn", f"{session}:2", "--workspace", workspace, home=tmp_path)

    assert shown.returncode == 0, shown.stderr
    assert f"session {session} turn 2" in shown.stdout
    assert "asked: remember that the deploy key rotates on Fridays" in shown.stdout
    assert 'call: memory_append {"text": "- the deploy key rotates on Fridays"}' in shown.stdout
    traced = json.loads(as_json.stdout)
    assert traced["steps"][0]["commit"]["sha"] == second
    assert traced["turn"]["prompt"] == "remember that the deploy key rotates on Fridays"
    assert [c["sha"] for c in traced["turn_writes"]] == [second]
    assert turn.returncode == 0 and f"{second[:7]} memory(tool): append 1 line" in turn.stdout


def test_why_says_clearly_what_it_cannot_trace(tmp_path: Path) -> None:
    workspace = str(tmp_path / "ws")
    assert cairn("init", workspace, home=tmp_path).returncode == 0
    (Path(workspace) / "MEMORY.md").write_text("# Memory\n- not committed\n")

    cases = {
        "MEMORY.md:99": "there is no line 99",
        "../secret.md:1": "",
        "MEMORY.md": "is not FILE:LINE",
    }
    for place, said in cases.items():
        done = cairn("why", place, "--workspace", workspace, home=tmp_path)
        assert done.returncode != 0 and said in done.stderr + done.stdout
        assert "Traceback" not in done.stderr
    uncommitted = cairn("why", "MEMORY.md:2", "--workspace", workspace, home=tmp_path)
    assert uncommitted.returncode == 1
    assert "no provenance: no commit holds it" in uncommitted.stdout


def test_why_still_finds_the_call_after_a_forget_rewrote_every_commit(tmp_path: Path) -> None:
    workspace = str(tmp_path / "ws")
    said = ("I prefer tea over coffee", "the deploy key rotates on Fridays", "Ana owns the release")
    ran = cairn(
        "run",
        "--demo",
        "--workspace",
        workspace,
        *(f"remember that {s}" for s in said),
        home=tmp_path,
    )
    note = next(e["path"] for e in events_of(ran) if e["type"] == "memory_written")
    forgot = cairn("forget", f"{note}:2", "--yes", "--workspace", workspace, home=tmp_path)
    assert forgot.returncode == 0, forgot.stdout + forgot.stderr

    shown = cairn("why", f"{note}:2", "--workspace", workspace, home=tmp_path)

    assert shown.returncode == 0 and "turn 3" in shown.stdout
    assert 'call: memory_append {"text": "- Ana owns the release"}' in shown.stdout
    assert "deploy key" not in shown.stdout


def test_why_and_forget_work_in_a_project_memory_and_leave_the_global_one_alone(
    tmp_path: Path,
) -> None:
    ws, heron = tmp_path / "ws", tmp_path / "heron"
    heron.mkdir()
    common = ("--workspace", str(ws), "--project", str(heron))
    scopes = {"CAIRN_SCOPES_ENABLED": "on"}
    ran = cairn(
        "run", *common, "remember that the heron staging database is on port 6543",
        home=tmp_path, **scopes,
    )  # fmt: skip
    [written] = [e for e in events_of(ran) if e["type"] == "memory_written"]
    assert written["scope"] == "project:heron"
    place = f"{written['path']}:1"

    in_project = cairn("why", place, "--scope", "project", *common, home=tmp_path, **scopes)
    in_global = cairn("why", place, *common, home=tmp_path, **scopes)
    forgot = cairn("forget", place, "--scope", "project", "--yes", *common, home=tmp_path, **scopes)

    assert in_project.returncode == 0, in_project.stderr
    assert "staging database is on port 6543" in in_project.stdout
    assert "asked: remember that the heron staging database" in in_project.stdout
    assert in_global.returncode != 0  # the global memory has no such note
    assert forgot.returncode == 0, forgot.stdout + forgot.stderr
    [project_memory] = (tmp_path / "ws-projects").glob("heron-*")
    assert "6543" not in (project_memory / written["path"]).read_text()
    assert (ws / "MEMORY.md").is_file()  # the global memory is untouched
    kept = [p for p in (ws / ".cairn").rglob("*") if p.is_file()]
    assert kept and not [p for p in kept if b"6543" in p.read_bytes()]  # its sessions too

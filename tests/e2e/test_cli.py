"""`cairn` as a user runs it: real subprocesses, the demo brain, the real embedding model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from shell.config import KEY_ENV_VARS
from tests.git_read import commit, commits, has_commits

CAIRN = Path(sys.executable).parent / "cairn"


def cairn_env(home: Path, **env: str) -> dict[str, str]:
    """The environment of a `cairn` under test: no provider key, no `CAIRN_*` but these, no
    config file, no watcher, no calls Cairn makes for a local model (the loopback server is
    one: `memory_assist`), one memory (the folder the tests run in would be a project with a
    memory of its own: `tests/e2e/test_scopes_cli.py` turns scopes on), and `home` for HOME."""
    environment = {
        k: v for k, v in os.environ.items() if k not in KEY_ENV_VARS and not k.startswith("CAIRN_")
    }
    environment.update(HOME=str(home), CAIRN_CONFIG=str(home / "none.toml"), CAIRN_WATCH="false")
    environment.update({"CAIRN_MEMORY_ASSIST": "off", "CAIRN_SCOPES_ENABLED": "off", **env})
    return environment


def started(*args: str, home: Path, text: bool = False) -> subprocess.Popen[Any]:
    """`cairn` running, its stdin closed, its stdout and stderr pipes to read."""
    return subprocess.Popen(
        [str(CAIRN), *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cairn_env(home),
        text=text,
    )


def cairn(
    *args: str, home: Path, stdin: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CAIRN), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=cairn_env(home, **env),
        timeout=300,
    )


def events_of(result: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


@pytest.fixture(scope="module")
def remembered(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, list[dict[str, Any]], list[dict[str, Any]]]:
    home = tmp_path_factory.mktemp("home")
    ws = home / "demo-ws"
    first = cairn(
        "run", "--workspace", str(ws), "remember that our deploy window is Friday 14:00", home=home
    )
    assert first.returncode == 0, first.stderr
    second = cairn("run", "--workspace", str(ws), "when is our deploy window?", home=home)
    assert second.returncode == 0, second.stderr
    return ws, events_of(first), events_of(second)


def test_remember_writes_a_commit(remembered: tuple[Path, list[Any], list[Any]]) -> None:
    ws, first, _ = remembered
    assert first[0]["type"] == "session_started" and first[0]["demo"] is True
    [written] = of(first, "memory_written")
    assert written["path"].startswith("memory/") and written["commit"]
    log = commits(ws)
    assert log[0].sha == written["commit"]
    assert "Friday 14:00" in (ws / written["path"]).read_text()
    assert len(log) == 2  # the seed commit, then the write


def test_the_answer_comes_from_memory_with_a_citation(
    remembered: tuple[Path, list[Any], list[Any]],
) -> None:
    _, _, second = remembered
    assert [c["name"] for c in of(second, "tool_call_started")] == ["memory_search"]
    [search] = of(second, "search_performed")
    assert search["hits"] and "memory/" in search["hits"][0]["citation"]
    answer = " ".join(m["text"] for m in of(second, "assistant_message"))
    assert "Friday 14:00" in answer and "Source: memory/" in answer
    assert of(second, "turn_finished") == [
        {"type": "turn_finished", "turn": 1, "reason": "completed"}
    ]


def test_cairn_search_finds_by_meaning_and_by_token(
    remembered: tuple[Path, list[Any], list[Any]], tmp_path: Path
) -> None:
    ws, _, _ = remembered
    by_meaning = cairn("search", "--workspace", str(ws), "deployment schedule", home=tmp_path)
    assert by_meaning.returncode == 0, by_meaning.stderr
    assert "Friday 14:00" in by_meaning.stdout and "#L" in by_meaning.stdout
    assert by_meaning.stdout.startswith("hybrid search for 'deployment schedule'")
    assert "rerank" not in by_meaning.stdout
    reranked = cairn(
        "search",
        "--workspace",
        str(ws),
        "when is the deploy window",
        home=tmp_path,
        CAIRN_RERANK="true",
    )
    assert reranked.stdout.startswith("hybrid + rerank search for") and "Friday" in reranked.stdout
    assert ", rerank 0." in reranked.stdout  # the cross-encoder's score beside the others
    as_json = cairn("search", "--workspace", str(ws), "--json", "14:00", home=tmp_path)
    payload = json.loads(as_json.stdout)
    assert payload["results"][0]["textScore"] > 0
    assert payload["results"][0]["date"]  # the note the hit comes from is dated
    named = cairn("search", "--workspace", str(ws), "deploy window set today", home=tmp_path)
    assert "time named: 'today'" in named.stdout and "Friday 14:00" in named.stdout


def test_options_before_the_subcommand_apply_to_it(
    remembered: tuple[Path, list[Any], list[Any]], tmp_path: Path
) -> None:
    """argparse let a subcommand's defaults overwrite them: `cairn --workspace D init` seeded
    the default workspace, and `cairn --workspace D search` searched it."""
    ws = tmp_path / "ws"
    seeded = cairn("--workspace", str(ws), "init", home=tmp_path)
    assert seeded.returncode == 0, seeded.stderr
    assert (ws / "AGENTS.md").is_file() and has_commits(ws)
    assert not (tmp_path / ".local").exists()  # nothing seeded in the platform data dir
    notes, _, _ = remembered
    found = cairn("--workspace", str(notes), "search", "deploy window", home=tmp_path)
    assert found.returncode == 0, found.stderr
    assert "Friday 14:00" in found.stdout


def test_stdin_lines_are_turns_and_trace_matches_stdout(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    result = cairn(
        "run",
        "--workspace",
        str(tmp_path / "ws"),
        "--trace",
        str(trace),
        home=tmp_path,
        stdin="hello\nhow are you\n",
    )
    assert result.returncode == 0, result.stderr
    assert len(of(events_of(result), "turn_started")) == 2
    assert trace.read_text() == result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("run", "--workspace", "/proc/cairn-cannot-write", "hi"), "cairn: error:"),
        (("search", "--workspace", "{ws}", "-k", "0", "x"), "-k must be between 1 and 50"),
        (("run", "--workspace", "{ws}", "--session", "no-such-session", "hi"), "cairn: error:"),
        (("run", "--workspace", "{ws}", "--context-window", "100", "hi"), "(minimum 512)"),
        (("run", "--workspace", "{ws}", "--project", "{ws}/none", "hi"), "/none is not a folder"),
    ],
)
def test_errors_are_one_clear_line(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    args = tuple(a.replace("{ws}", str(tmp_path / "ws")) for a in args)
    result = cairn(*args, home=tmp_path)
    assert result.returncode != 0
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_an_unreachable_provider_is_an_error_event_not_a_crash(tmp_path: Path) -> None:
    result = cairn(
        "run",
        "--workspace",
        str(tmp_path / "ws"),
        "--model",
        "openai/none",
        "--api-base",
        "http://127.0.0.1:9/v1",
        "--context-window",
        "8000",
        "hi",
        home=tmp_path,
        CAIRN_MAX_ATTEMPTS="2",
        CAIRN_RETRY_BASE_DELAY="0.01",
    )
    assert result.returncode == 1
    events = events_of(result)
    assert of(events, "model_retry") and of(events, "error")
    assert events[-1]["reason"] == "error"
    assert "Traceback" not in result.stderr


def test_headless_flush_compact_and_session_continue(tmp_path: Path) -> None:
    ws = str(tmp_path / "ws")
    first = cairn(
        "run",
        "--workspace",
        ws,
        "--flush",
        "--compact",
        "tickets",
        # a fact told with a question: the turn searches memory, so the flush has it to write
        "FYI: ticket PROJ-7 is open. Who owns it?",
        home=tmp_path,
    )
    assert first.returncode == 0, first.stderr
    events = events_of(first)
    kinds = [e["type"] for e in events]
    assert (
        kinds.index("flush_started")
        < kinds.index("flush_finished")
        < kinds.index("compaction_started")
    )
    assert of(events, "flush_finished")[0]["outcome"] == "written"
    assert of(events, "compaction_started")[0]["focus"] == "tickets"
    session = events[0]["session_id"]
    second = cairn("run", "--workspace", ws, "--session", session, "hello", home=tmp_path)
    resumed = events_of(second)[0]
    assert resumed["session_id"] == session and resumed["resumed"] is True


def test_cairn_index_status_and_rebuild(
    remembered: tuple[Path, list[Any], list[Any]], tmp_path: Path
) -> None:
    ws, _, _ = remembered
    status = cairn("index", "--workspace", str(ws), "--status", home=tmp_path)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["chunks"] >= 1
    rebuilt = cairn("index", "--workspace", str(ws), "--rebuild", home=tmp_path)
    assert rebuilt.returncode == 0, rebuilt.stderr
    first, _, rest = rebuilt.stdout.partition("\n")
    assert json.loads(first)["type"] == "index_rebuilt"
    assert '"chunks"' in rest


QUESTIONS = [
    "how does Tom take his coffee?",
    "what coffee does Tom drink?",
    "does Tom want milk in his coffee?",
    "what is Tom's coffee order?",
]


@pytest.fixture(scope="module")
def dreamt(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[dict[str, Any]]]:
    """A fact remembered once and asked about four ways (the real model), then `cairn dream`."""
    home = tmp_path_factory.mktemp("home")
    ws = home / "ws"
    told = cairn(
        "run",
        "--workspace",
        str(ws),
        "remember that Tom takes his coffee black",
        *QUESTIONS,
        home=home,
    )
    assert told.returncode == 0, told.stderr
    dream = cairn("dream", "--workspace", str(ws), "--json", home=home)
    assert dream.returncode == 0, dream.stderr
    return home, ws, events_of(dream)


def test_cairn_dream_proposes_what_was_asked_about_four_ways(
    dreamt: tuple[Path, Path, list[dict[str, Any]]],
) -> None:
    _, ws, events = dreamt
    [proposed] = of(events, "dream_proposed")
    proposal = proposed["proposal"]
    assert (proposal["kind"], proposal["text"]) == ("add", "Tom takes his coffee black.")
    assert (proposal["recalls"], proposal["queries"], proposal["days"]) == (4, 4, 1)
    assert proposal["distilled_by"] == "model"  # the demo brain distils, deterministically
    [finished] = of(events, "dream_sweep_finished")
    assert finished["outcome"] == "written" and finished["open"] == 1
    assert f"**{proposal['id']}** · add · open" in (ws / "DREAMS.md").read_text()
    assert "Tom" not in (ws / "MEMORY.md").read_text()  # nothing enters it until accepted


def test_cairn_dream_lists_then_applies_one_commit(
    dreamt: tuple[Path, Path, list[dict[str, Any]]],
) -> None:
    home, ws, events = dreamt
    [proposed] = of(events, "dream_proposed")
    proposal_id = proposed["proposal"]["id"]
    listed = cairn("dream", "--workspace", str(ws), home=home)
    assert listed.returncode == 0, listed.stderr
    assert f"{proposal_id}  add  Tom takes his coffee black." in listed.stdout
    assert "decide with: cairn dream --apply ID" in listed.stdout
    made = len(commits(ws))

    applied = cairn("dream", "--workspace", str(ws), "--apply", proposal_id, home=home)
    assert applied.returncode == 0, applied.stderr
    assert f"accepted {proposal_id} into MEMORY.md" in applied.stdout
    assert len(commits(ws)) == made + 1
    assert commit(ws).message.startswith(f"memory(dream): accept {proposal_id}")
    assert sorted(commit(ws).files) == ["DREAMS.md", "MEMORY.md"]
    assert "- Tom takes his coffee black. — Source: memory/" in (ws / "MEMORY.md").read_text()

    again = cairn("dream", "--workspace", str(ws), "--apply", proposal_id, home=home)
    assert again.returncode == 1
    assert f"error: proposal {proposal_id} is accepted, not open" in again.stdout


def test_cairn_dream_edit_and_reject(tmp_path: Path) -> None:
    home = tmp_path
    ws = home / "ws"
    told = cairn(
        "run",
        "--workspace",
        str(ws),
        "remember that Tom takes his coffee black",
        "remember that Priya leads billing",
        *QUESTIONS,
        "who leads billing?",
        "which person runs the billing team?",
        "is Priya in charge of billing?",
        "who heads billing?",
        home=home,
    )
    assert told.returncode == 0, told.stderr
    events = events_of(cairn("dream", "--workspace", str(ws), "--json", home=home))
    ids = {e["proposal"]["text"]: e["proposal"]["id"] for e in of(events, "dream_proposed")}
    assert set(ids) == {"Tom takes his coffee black.", "Priya leads billing."}
    decided = cairn(
        "dream",
        "--workspace",
        str(ws),
        "--json",
        "--edit",
        ids["Tom takes his coffee black."],
        "Tom drinks black coffee",
        "--reject",
        ids["Priya leads billing."],
        home=home,
    )
    assert decided.returncode == 0, decided.stderr
    [accepted] = of(events_of(decided), "proposal_accepted")
    assert accepted["edited"] and accepted["text"] == "Tom drinks black coffee"
    [rejected] = of(events_of(decided), "proposal_rejected")
    assert rejected["open"] == 0
    memory = (ws / "MEMORY.md").read_text()
    assert "Tom drinks black coffee — Source:" in memory and "Priya" not in memory
    later = events_of(cairn("dream", "--workspace", str(ws), "--json", home=home))
    assert of(later, "dream_proposed") == []  # the rejected one does not come back

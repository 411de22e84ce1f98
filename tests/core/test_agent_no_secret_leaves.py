"""No secret leaves: through the real agent, litellm and the loopback model, a prompt holding a
GitHub token and an AWS key pair, a memory_search whose query holds the token, and a
`cat .env` of a project's secrets (its output cut, then read on with read_output) leave no
planted secret in any file of the workspace (`.cairn` and git's objects included), in the trace
or in `cairn run`'s JSON lines, in process and as a user runs it; the kept output is 0600 in a
0700 folder, and what read_output reads back is redacted."""

from __future__ import annotations

import io
import json
import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from shell import events as ev
from shell.config import Settings, ToolSettings
from shell.headless.run import EventSink
from tests.core.agent_helpers import collect, of, started
from tests.e2e.test_cli import cairn, events_of
from tests.fakes.openai_script import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.git_read import git

GITHUB = "ghp_" + "R8x2" * 9
AWS_KEY = "AKIAJ7Q2WXYZ4PLANTED"
AWS_SECRET = "q9Zr/Lk3PlantedSecretAccessKey0000EXAMPL"
DB_PASSWORD = "s3cr3tP4ssPlanted"
ENV_GITHUB = "ghp_" + "Env9" * 9
PLANTED = (GITHUB, AWS_KEY, AWS_SECRET, DB_PASSWORD, ENV_GITHUB)
PROMPT = f"deploys sign in with {GITHUB}; the aws key is {AWS_KEY} with secret {AWS_SECRET}"
FILLER = "".join(f"# setting {n:05} is documented in the wiki\n" for n in range(1200))
ENV = (
    f"GITHUB_TOKEN={GITHUB}\nAWS_ACCESS_KEY_ID={AWS_KEY}\n{FILLER}"
    f"DATABASE_URL=postgres://admin:{DB_PASSWORD}@db:5432/app\nRELEASE_TOKEN={ENV_GITHUB}\n"
    f"{FILLER}"
)
"""Over the head and tail a result keeps: its middle (the DB password, the second token) is
only in the kept output, which read_output reads on."""
MIDDLE = ENV[: ENV.index("DATABASE_URL")].count("\n") + 1


def script(fake: FakeOpenAI) -> None:
    """The model's side of the three turns."""
    append = json.dumps({"text": f"- {PROMPT}"})
    query = json.dumps({"query": f"which service uses {GITHUB}"})
    command = json.dumps({"command": "cat .env", "timeout": 30})
    read_on = json.dumps({"ref": "output:c1", "from": MIDDLE, "lines": 3})
    fake.enqueue(
        Reply(tool_calls=[("m1", "memory_append", append)]),
        Reply(text="Noted."),
        Reply(tool_calls=[("s1", "memory_search", query)]),
        Reply(text="Found it."),
        Reply(tool_calls=[("c1", "run_command", command)]),
        Reply(tool_calls=[("r1", "read_output", read_on)]),
        Reply(text="Done."),
    )


TURNS = (PROMPT, f"what do my notes say about {GITHUB}?", "show me the project's .env")


@pytest.fixture
def settings(fake_settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CAIRN_CONFIG", str(tmp_path / "none.toml"))
    project = tmp_path / "project"
    project.mkdir()
    (project / ".env").write_text(ENV, encoding="utf-8")
    return replace(fake_settings, project=project, tools=ToolSettings(approval="yes"))


def leaks(text: str | bytes) -> list[str]:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return [secret for secret in PLANTED if secret.encode() in data]


def workspace_leaks(root: Path) -> dict[str, list[str]]:
    """Every file under `root` (`.cairn` and `.git` too), every commit's message and diff, and
    every object git holds (loose or packed, reachable or not)."""
    found = {
        str(p.relative_to(root)): leaks(p.read_bytes()) for p in root.rglob("*") if p.is_file()
    }
    found["git log -p --all"] = leaks(git(root, "log", "-p", "--all", "--format=%H%n%B"))
    listed = git(root, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
    objects = subprocess.run(
        ["git", "cat-file", "--batch"],
        cwd=root,
        input="\n".join(listed.split()).encode(),
        capture_output=True,
        check=True,
    ).stdout
    found["git cat-file --batch"] = leaks(objects)
    return {where: secrets for where, secrets in found.items() if secrets}


def modes(state: Path) -> dict[str, str]:
    """The mode of `.cairn` and of everything in it that is not 0600 (files) or 0700
    (folders), but inside the index's LanceDB tables, which LanceDB writes itself (in the
    0700 index folder)."""
    odd = {}
    for path in [state, *state.rglob("*")]:
        if any(part.endswith(".lance") for part in path.relative_to(state).parts[1:]):
            continue
        want = 0o700 if path.is_dir() else 0o600
        if (mode := path.stat().st_mode & 0o777) != want:
            odd[str(path.relative_to(state))] = oct(mode)
    return odd


async def test_no_secret_leaves_through_the_agent(
    settings: Settings, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    trace, out = tmp_path / "trace.jsonl", io.StringIO()
    sink = EventSink(out, trace)  # what `cairn run --trace` writes
    agent = await started(settings)
    script(fake_openai)
    seen: list[ev.BaseEvent] = []
    try:
        for text in TURNS:
            for event in await collect(agent.submit(text)):
                seen.append(event)
                sink(event)  # type: ignore[arg-type]
    finally:
        await agent.aclose()
        sink.close()

    [search] = of(seen, ev.SearchPerformed)
    assert GITHUB in search.query  # the live event, as the model asked
    [command] = of(seen, ev.CommandFinished)
    assert command.output_ref == "output:c1"
    read_on = fake_openai.requests[-1]["messages"][-1]
    assert read_on["role"] == "tool" and "[REDACTED Basic Auth Credentials]" in read_on["content"]
    assert "[REDACTED GitHub Token]" in read_on["content"] and not leaks(read_on["content"])
    assert workspace_leaks(settings.workspace) == {}
    assert leaks(trace.read_bytes()) == [] and leaks(out.getvalue()) == []
    kept = settings.state_dir / "outputs" / "c1.txt"
    assert (kept.stat().st_mode & 0o777, kept.parent.stat().st_mode & 0o777) == (0o600, 0o700)
    assert modes(settings.state_dir) == {}


def test_no_secret_leaves_through_cairn_run(
    settings: Settings, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    script(fake_openai)
    trace = tmp_path / "run-trace.jsonl"
    ran = cairn(
        *("run", "--workspace", str(settings.workspace), "--project", str(settings.project)),
        *("--model", "openai/fake", "--api-base", fake_openai.base_url, "--yes"),
        *("--trace", str(trace), *TURNS),
        home=tmp_path / "home",
        CAIRN_API_KEY="sk-test",
        CAIRN_EMBEDDER="hash",
        CAIRN_CONTEXT_WINDOW="32000",
    )

    assert ran.returncode == 0, ran.stderr
    events = events_of(ran)
    [search] = [e for e in events if e["type"] == "search_performed"]
    [started_] = [e for e in events if e["type"] == "turn_started"][:1]
    assert "[REDACTED GitHub Token]" in search["query"] + started_["prompt"]
    assert leaks(ran.stdout) == [] and leaks(trace.read_bytes()) == []
    assert workspace_leaks(settings.workspace) == {}
    assert modes(settings.state_dir) == {}
    assert os.stat(settings.state_dir / "outputs" / "c1.txt").st_mode & 0o777 == 0o600

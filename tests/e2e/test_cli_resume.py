"""`cairn run` killed in the middle of a round, and a reply no UTF-8 can hold: real subprocesses
against the loopback OpenAI fake, which keeps every request the resumed session sends."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

from tests.e2e.test_cli import CAIRN, cairn, cairn_env, events_of
from tests.fakes.openai_script import Reply
from tests.fakes.openai_server import FakeOpenAI


def _common(tmp_path: Path, fake_openai: FakeOpenAI) -> tuple[str, ...]:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return (
        "run",
        "--workspace",
        str(tmp_path / "ws"),
        "--project",
        str(project),
        "--model",
        "openai/fake",
        "--api-base",
        fake_openai.base_url,
        "--context-window",
        "32000",
    )


def test_a_run_killed_mid_round_resumes_with_every_call_answered(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.enqueue(
        Reply(
            tool_calls=[
                ("c1", "memory_append", '{"text": "- the kiln fires on Tuesdays"}'),
                ("c2", "run_command", '{"command": "sleep 60"}'),
                ("c3", "memory_append", '{"text": "- never reached"}'),
            ]
        )
    )
    common = _common(tmp_path, fake_openai)
    run = subprocess.Popen(
        [str(CAIRN), *common, "--allow", "run_command:sleep*", "note it, then wait"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=cairn_env(tmp_path),
        text=True,
    )
    assert run.stdout is not None
    for line in run.stdout:  # killed once the second call runs
        event = json.loads(line)
        if event["type"] == "tool_call_started" and event["call_id"] == "c2":
            break
    run.send_signal(signal.SIGKILL)
    run.wait(timeout=30)
    run.stdout.close()

    fake_openai.enqueue(Reply(text="the kiln note is saved; the wait was cut"))
    resumed = cairn(*common, "--resume", "where were we?", home=tmp_path)

    assert resumed.returncode == 0, resumed.stderr
    events = events_of(resumed)
    assert any("started, result lost" in e["message"] for e in events if e["type"] == "notice")
    assert events[-1] == {"type": "turn_finished", "turn": 2, "reason": "completed"}
    messages = fake_openai.requests[-1]["messages"]
    [at] = [i for i, m in enumerate(messages) if m.get("tool_calls")]
    answers = messages[at + 1 : at + 4]
    assert [(m["role"], m["tool_call_id"]) for m in answers] == [
        ("tool", "c1"),
        ("tool", "c2"),
        ("tool", "c3"),
    ]
    assert '"appended": 1' in answers[0]["content"]
    assert answers[1]["content"].startswith("Interrupted: this call started")
    assert answers[2]["content"] == "Not run: Cairn stopped before this call started."


def test_a_lone_surrogate_in_a_reply_and_a_path_exits_0_and_resumes(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.enqueue(
        Reply(
            text="see \udcff",
            tool_calls=[("c1", "read_file", '{"path": "odd\udcff.txt"}')],
        ),
        Reply(text="no such file \udcff"),
    )
    common = _common(tmp_path, fake_openai)

    first = subprocess.run(
        [str(CAIRN), *common, "--trace", str(tmp_path / "trace.jsonl"), "read it"],
        capture_output=True,
        env=cairn_env(tmp_path),
        timeout=300,
    )

    assert first.returncode == 0, first.stderr.decode("utf-8", "replace")
    events = [json.loads(line) for line in first.stdout.decode("utf-8").splitlines()]
    assert [e["text"] for e in events if e["type"] == "assistant_message"] == [
        "see \\udcff",
        "no such file \\udcff",
    ]
    for line in (tmp_path / "trace.jsonl").read_text(encoding="utf-8").splitlines():
        json.loads(line)
    fake_openai.enqueue(Reply(text="fine"))
    again = cairn(*common, "--resume", "and now?", home=tmp_path)
    assert again.returncode == 0, again.stderr
    assert events_of(again)[-1]["reason"] == "completed"


def test_resume_of_a_session_nothing_can_give_back_is_an_error_not_a_new_session(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    common = _common(tmp_path, fake_openai)
    assert cairn(*common, "hello", home=tmp_path).returncode == 0
    sessions = tmp_path / "ws" / ".cairn" / "sessions"
    [record] = [p for p in sessions.glob("*.json")]
    record.write_text('{"session_id": ')
    record.with_suffix(".jsonl").unlink()

    resumed = cairn(*common, "--resume", "again", home=tmp_path)

    assert resumed.returncode == 1 and resumed.stdout == ""
    assert resumed.stderr.startswith(f"cairn: error: session {record.stem} cannot be resumed")
    assert len(resumed.stderr.strip().splitlines()) == 1
    assert [p.name for p in sessions.glob("*.json")] == [record.name]  # no new session

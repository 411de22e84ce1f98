"""Sessions always resume: a round a kill cut short, text no UTF-8 can hold, a record that cannot
be read. Each through the real agent and the loopback OpenAI fake, which keeps every request."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from shell import events as ev
from shell.build import build_agent
from shell.config import Settings
from shell.headless.run import run_headless
from shell.session.store import SessionUnrecoverable
from shell.tools.toolbox import ToolResult
from tests.core.agent_helpers import collect, of, started
from tests.fakes.openai_script import Reply
from tests.fakes.openai_server import FakeOpenAI


def _session_file(settings: Settings, suffix: str) -> Path:
    """The one session's transcript (".jsonl") or record (".json")."""
    [path] = [
        path
        for path in (settings.state_dir / "sessions").glob(f"*{suffix}")
        if path.name.count(".") == 1
    ]
    return path


async def test_a_lone_surrogate_from_the_model_ends_no_run_and_the_session_resumes(
    fake_settings: Settings, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    fake_openai.enqueue(
        Reply(
            text="the file \udcff is odd",
            tool_calls=[
                ("c1", "memory_get", '{"path": "memory/x\udcff.md"}'),  # a raw surrogate
                ("c2", "memory_get", '{"path": "memory/y\\udcff.md"}'),  # its JSON escape
                ("c3", "memory_get", '{"path": "MEMORY.md"}'),
            ],
        ),
        Reply(text="done \udcff"),
    )
    out, trace = io.StringIO(), tmp_path / "trace.jsonl"

    code = await run_headless(fake_settings, ["look"], out=out, trace=trace)

    assert code == 0
    printed = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line["type"] for line in printed].count("tool_call_finished") == 3
    traced = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    assert [line["text"] for line in traced if line["type"] == "assistant_message"] == [
        "the file \\udcff is odd",
        "done \\udcff",
    ]
    transcript = _session_file(fake_settings, ".jsonl").read_text(encoding="utf-8")
    assert "Cancelled by the user" not in transcript
    sent = json.dumps(fake_openai.requests[-1]["messages"])
    assert "\\\\udcff" in sent, "the escape reaches the provider as text, never as a surrogate"

    resumed = build_agent(fake_settings, resume=True)
    await collect(resumed.start())
    fake_openai.enqueue(Reply(text="still here"))
    turn = await collect(resumed.submit("and now?"))
    assert turn[-1] == ev.TurnFinished(turn=2, reason="completed")
    answers = [m for m in fake_openai.requests[-1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in answers] == ["c1", "c2", "c3"]
    await resumed.aclose()


THREE_NOTES = [
    ("c1", "memory_append", '{"text": "- first fact"}'),
    ("c2", "memory_append", '{"text": "- second fact"}'),
    ("c3", "memory_append", '{"text": "- third fact"}'),
]


async def _a_round_of_three(settings: Settings, fake_openai: FakeOpenAI) -> list[bytes]:
    """A session whose one turn ran a round of three tool calls; its transcript's lines."""
    agent = await started(settings)
    fake_openai.enqueue(Reply(tool_calls=THREE_NOTES), Reply(text="saved"))
    await collect(agent.submit("save three facts"))
    await agent.aclose()
    return _session_file(settings, ".jsonl").read_bytes().splitlines(keepends=True)


def _cut_after(settings: Settings, lines: list[bytes], marker: bytes) -> None:
    """The transcript as a kill would leave it: nothing after the line holding `marker`."""
    last = max(i for i, line in enumerate(lines) if marker in line)
    _session_file(settings, ".jsonl").write_bytes(b"".join(lines[: last + 1]))


def _answers_after_the_round(request: dict[str, object]) -> list[dict[str, str]]:
    messages = request["messages"]
    assert isinstance(messages, list)
    [at] = [i for i, m in enumerate(messages) if m.get("tool_calls")]
    return messages[at + 1 : at + 4]


async def test_a_round_a_kill_cut_after_its_first_result_resumes_with_every_call_answered(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    lines = await _a_round_of_three(fake_settings, fake_openai)
    _cut_after(fake_settings, lines, b'"tool_call_id": "c1"')

    resumed = build_agent(fake_settings, resume=True)
    start = await collect(resumed.start())
    fake_openai.enqueue(Reply(text="all there"))
    turn = await collect(resumed.submit("what did you save?"))

    [notice] = [n for n in of(start, ev.Notice) if "tool call(s)" in n.message]
    assert notice.level == "warning" and "never started" in notice.message
    answers = _answers_after_the_round(fake_openai.requests[-1])
    assert [(m["role"], m["tool_call_id"]) for m in answers] == [
        ("tool", "c1"),
        ("tool", "c2"),
        ("tool", "c3"),
    ]
    assert answers[0]["content"] != answers[1]["content"]  # c1's own result
    assert answers[1]["content"] == "Not run: Cairn stopped before this call started."
    assert answers[2]["content"] == answers[1]["content"]
    assert turn[-1] == ev.TurnFinished(turn=2, reason="completed")
    assert of(turn, ev.AssistantMessage)[-1].text == "all there"
    again = build_agent(fake_settings, resume=True)  # the same answers, where they were
    assert again.messages == resumed.messages
    await resumed.aclose()


async def test_a_call_the_kill_cut_while_it_ran_is_said_to_have_started(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    lines = await _a_round_of_three(fake_settings, fake_openai)
    _cut_after(fake_settings, lines, b'"call_id": "c2"')  # its start kept, not its result

    resumed = build_agent(fake_settings, resume=True)
    start = await collect(resumed.start())
    fake_openai.enqueue(Reply(text="checked"))
    turn = await collect(resumed.submit("did the second one land?"))

    assert any("started, result lost" in n.message for n in of(start, ev.Notice))
    answers = _answers_after_the_round(fake_openai.requests[-1])
    assert [m["tool_call_id"] for m in answers] == ["c1", "c2", "c3"]
    assert answers[1]["content"].startswith("Interrupted: this call started, but Cairn stopped")
    assert answers[2]["content"] == "Not run: Cairn stopped before this call started."
    assert turn[-1] == ev.TurnFinished(turn=2, reason="completed")
    await resumed.aclose()


async def test_an_older_transcript_cut_mid_round_says_what_is_not_known(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    lines = await _a_round_of_three(fake_settings, fake_openai)
    older = [
        line.replace(b', "starts": "recorded"', b"")
        for line in lines
        if b'"kind": "event"' not in line  # written before starts were kept
    ]
    _cut_after(fake_settings, older, b'"tool_call_id": "c1"')

    resumed = build_agent(fake_settings, resume=True)

    contents = [m["content"] for m in resumed.messages if m["role"] == "tool"]
    assert "whether it ran is not known" in contents[1]
    assert contents[2] == "Not run: Cairn stopped before this call started."


async def _a_session(settings: Settings, fake_openai: FakeOpenAI) -> list[dict[str, object]]:
    agent = await started(settings)
    fake_openai.enqueue(Reply(text="noted"), Reply(text="noted again"))
    await collect(agent.submit("remember the blue door"))
    await collect(agent.submit("and the red one"))
    await agent.aclose()
    return agent.messages


@pytest.mark.parametrize(
    "record",
    [
        b'{\n  "session_id": "2026',  # truncated
        b'{"session_id": 7, "created_at": [], "turns": "two"}',  # wrong types
        b'["not", "a", "record"]',
        b"\xff\xfe",
    ],
)
async def test_a_corrupt_record_is_said_and_the_session_resumes_from_its_transcript(
    fake_settings: Settings, fake_openai: FakeOpenAI, record: bytes
) -> None:
    messages = await _a_session(fake_settings, fake_openai)
    path = _session_file(fake_settings, ".json")
    path.write_bytes(record)

    resumed = build_agent(fake_settings, resume=True)
    start = await collect(resumed.start())

    assert of(start, ev.SessionStarted)[0].resumed
    assert resumed.session_id == path.stem and resumed.messages == messages
    [notice] = [n for n in of(start, ev.Notice) if "record" in n.message]
    assert notice.level == "warning" and "unreadable" in notice.message
    assert "Rebuilt from its transcript: 2 turn(s)" in notice.message
    assert path.with_name(path.name + ".corrupt").read_bytes() == record
    fake_openai.enqueue(Reply(text="both doors"))
    turn = await collect(resumed.submit("which doors?"))
    assert turn[-1] == ev.TurnFinished(turn=3, reason="completed")
    sent = fake_openai.requests[-1]["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"][:2] == [
        "remember the blue door",
        "and the red one",
    ]
    await resumed.aclose()
    assert json.loads(path.read_text())["turns"] == 3  # the rebuilt record is the record now


async def test_a_session_that_cannot_be_recovered_at_all_is_said_and_not_replaced(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    await _a_session(fake_settings, fake_openai)
    record = _session_file(fake_settings, ".json")
    record.write_bytes(b"{")
    _session_file(fake_settings, ".jsonl").unlink()

    with pytest.raises(SessionUnrecoverable, match="cannot be resumed"):
        build_agent(fake_settings, resume=True)
    with pytest.raises(SessionUnrecoverable, match="run without --resume"):
        build_agent(fake_settings, session_id=record.stem)
    assert record.read_bytes() == b"{"  # nothing overwritten


async def test_calls_an_error_left_without_a_result_are_not_said_cancelled_by_the_user(
    fake_settings: Settings, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = await started(fake_settings)
    fit = agent.workbench.fit

    def failing(call_id: str, result: ToolResult) -> ToolResult:
        if call_id == "c2":
            raise RuntimeError("a bug in the core")
        return fit(call_id, result)

    monkeypatch.setattr(agent.workbench, "fit", failing)
    fake_openai.enqueue(Reply(tool_calls=THREE_NOTES))
    with pytest.raises(RuntimeError, match="a bug in the core"):
        await collect(agent.submit("save three facts"))

    contents = [m["content"] for m in agent.messages if m["role"] == "tool"]
    assert contents[1] == (
        "Interrupted: this call started, but the turn ended on an error before its result was "
        "kept; what it did (a write, a command) may have happened."
    )
    assert contents[2] == "Not run: the turn ended on an error before this call started."
    assert build_agent(fake_settings, resume=True).messages == agent.messages
    await agent.aclose()

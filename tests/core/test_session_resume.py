"""Sessions always resume: a round a kill cut short, text no UTF-8 can hold, a record that cannot
be read. Each through the real agent and the loopback OpenAI fake, which keeps every request."""

from __future__ import annotations

import io
import json
from pathlib import Path

from shell import events as ev
from shell.build import build_agent
from shell.config import Settings
from shell.headless.run import run_headless
from tests.core.agent_helpers import collect
from tests.fakes.openai_script import Reply
from tests.fakes.openai_server import FakeOpenAI


def _session_file(settings: Settings, suffix: str) -> Path:
    return next((settings.state_dir / "sessions").glob(f"*{suffix}"))


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

"""What Cairn shows and keeps about a call carries the secret as memory stored it: redacted.

The real agent on the demo brain saves a connection string with a password; the tool card's
events (arguments and result), the session file and the trace hold the redacted form, while the
running session's context keeps what the user typed.
"""

from __future__ import annotations

import json
from pathlib import Path

from shell import events as ev
from shell.config import Settings
from shell.headless.run import EventSink
from shell.secrets.detect import redact_values
from tests.core.agent_helpers import collect, of, started

PASSWORD = "s3cr3tP4ss"
SAID = f"remember that the database is postgres://admin:{PASSWORD}@db.example.com:5432/app"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


async def test_the_card_shows_the_arguments_as_memory_stored_them(
    demo_settings: Settings,
) -> None:
    agent = await started(demo_settings)

    events = await collect(agent.submit(SAID))

    [call] = of(events, ev.ToolCallStarted)
    [finished] = of(events, ev.ToolCallFinished)
    assert call.name == "memory_append"
    shown = json.dumps(call.arguments)
    assert PASSWORD not in shown and "[REDACTED Basic Auth Credentials]" in shown
    assert PASSWORD not in finished.result
    note = next((demo_settings.workspace / "memory").glob("*.md")).read_text()
    assert PASSWORD not in note and "[REDACTED Basic Auth Credentials]" in note
    await agent.aclose()


async def test_the_session_file_keeps_no_secret_the_live_context_does(
    demo_settings: Settings,
) -> None:
    agent = await started(demo_settings)

    await collect(agent.submit(SAID))
    await collect(agent.submit(f"the secret is {AWS_SECRET}"))

    on_disk = "\n".join(
        path.read_text() for path in (demo_settings.state_dir / "sessions").glob("*.jsonl")
    )
    assert PASSWORD not in on_disk and AWS_SECRET not in on_disk
    assert "[REDACTED Basic Auth Credentials]" in on_disk
    for line in filter(None, on_disk.splitlines()):  # every entry (tool call arguments too) is JSON
        entry = json.loads(line)
        for call in entry.get("message", {}).get("tool_calls") or []:
            json.loads(call["function"]["arguments"])
    live = json.dumps(agent.conversation.messages)
    assert PASSWORD in live and AWS_SECRET in live
    await agent.aclose()


def test_a_trace_file_keeps_no_secret(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    shown: list[str] = []

    class Out:
        def write(self, text: str) -> None:
            shown.append(text)

        def flush(self) -> None:
            pass

    sink = EventSink(Out(), trace)  # type: ignore[arg-type]
    sink(ev.TurnStarted(session_id="s", turn=1, prompt=f"the secret is {AWS_SECRET}"))
    sink.close()

    [line] = trace.read_text().splitlines()
    assert AWS_SECRET not in line
    assert ev.from_json(line) == ev.TurnStarted(
        session_id="s", turn=1, prompt="the secret is [REDACTED Secret After A Keyword]"
    )


def test_tool_call_arguments_in_a_message_stay_json_when_redacted() -> None:
    arguments = json.dumps({"text": f"- db at postgres://admin:{PASSWORD}@db:5432/app"})
    message = {"role": "assistant", "tool_calls": [{"function": {"arguments": arguments}}]}

    cleaned = redact_values(message)

    kept = json.loads(cleaned["tool_calls"][0]["function"]["arguments"])
    assert kept == {
        "text": "- db at postgres://admin:[REDACTED Basic Auth Credentials]@db:5432/app"
    }

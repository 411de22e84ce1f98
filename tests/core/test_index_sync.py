"""Index freshness: incremental sync, the embedding cache, self-healing, identity, the watcher."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from shell.events import IndexRebuilt, IndexSynced, IndexSyncProgress
from shell.memory.index.coherence import with_follows
from shell.memory.index.embed import HashEmbedder
from shell.memory.index.memory_index import EmbeddingFailed, MemoryIndex
from shell.memory.index.store import SCHEMA_VERSION, LanceStore
from shell.memory.index.watch import MemoryWatcher
from shell.memory.index.writer import SyncCancelled


class CountingEmbedder:
    """The real HashEmbedder, recording every text it is asked to embed."""

    def __init__(self) -> None:
        self._inner = HashEmbedder()
        self.name = self._inner.name
        self.dim = self._inner.dim
        self.texts: list[str] = []
        self.fail = False

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.fail:
            raise RuntimeError("model crashed")
        self.texts.extend(texts)
        return self._inner.embed(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._inner.embed_query(text)


def daily(day: int, lines: int = 30) -> str:
    return "".join(
        f"- {day}: fact number {i} about project {i % 5} and its owner\n" for i in range(lines)
    )


@pytest.fixture
def embedder() -> CountingEmbedder:
    return CountingEmbedder()


@pytest.fixture
def notes(workspace: Path) -> Path:
    (workspace / "memory").mkdir(parents=True)
    (workspace / "MEMORY.md").write_text("# Memory\n- likes tea\n")
    for day in (1, 2, 3):
        (workspace / "memory" / f"2026-11-0{day}.md").write_text(daily(day))
    return workspace


def make_index(workspace: Path, embedder: CountingEmbedder, **kwargs: int) -> MemoryIndex:
    return MemoryIndex(
        workspace,
        embedder,
        chunk_tokens=kwargs.get("chunk_tokens", 60),
        context_tokens=kwargs.get("context_tokens", 10),
    )


def paths_in(index: MemoryIndex) -> set[str]:
    hits = index.vector_candidates(index.embedder.embed_query("fact"), 10_000)
    return {chunk.path for chunk in index.chunks([h for h, _ in hits]).values()}


def synced(events: list) -> IndexSynced:
    assert isinstance(events[-1], IndexSynced)
    return events[-1]


def test_editing_one_file_rechunks_it_and_embeds_only_changed_chunks(
    notes: Path, embedder: CountingEmbedder
) -> None:
    index = make_index(notes, embedder)
    index.sync()
    total = index.status()["chunks"]
    embedder.texts.clear()
    path = notes / "memory" / "2026-11-02.md"
    lines = path.read_text().splitlines(keepends=True)
    lines[25] = "- 2: the owner of project zero changed to Ada\n"
    path.write_text("".join(lines))

    result = synced(index.sync(trigger="watch"))

    assert (result.files_changed, result.files_removed) == (1, 0)
    assert 1 <= result.embedded == len(embedder.texts) < 4
    assert all("Ada" in text for text in embedder.texts)
    assert result.chunks_total == index.status()["chunks"] == total
    assert result.trigger == "watch"
    assert index.keyword_candidates("Ada", 3)[0][0].startswith("memory/2026-11-02.md:")


def test_editing_a_unit_rewrites_how_the_unit_after_it_is_read(
    notes: Path, embedder: CountingEmbedder
) -> None:
    index = make_index(notes, embedder)
    index.sync()
    path = notes / "memory" / "2026-11-02.md"
    lines = path.read_text().splitlines(keepends=True)
    lines[10] = "- 2: the owner of project zero changed to Ada\n"
    path.write_text("".join(lines))

    index.sync()

    units, vectors = index.file_units("memory/2026-11-02.md")
    after = next(unit for unit in units if unit.start_line == 12)
    assert "Ada" in after.context  # its keyword context is the edited line, not the old one
    assert with_follows(units, vectors) == units  # and how alike they are is measured afresh
    reopened, _ = make_index(notes, embedder).file_units("memory/2026-11-02.md")
    assert reopened == units


def test_unchanged_files_cost_nothing(notes: Path, embedder: CountingEmbedder) -> None:
    index = make_index(notes, embedder)
    index.sync()
    embedder.texts.clear()

    result = synced(index.sync())

    assert (result.files_changed, result.files_removed, result.embedded) == (0, 0, 0)
    assert embedder.texts == []


def test_deleting_a_file_removes_its_rows(notes: Path, embedder: CountingEmbedder) -> None:
    index = make_index(notes, embedder)
    index.sync()
    (notes / "memory" / "2026-11-03.md").unlink()

    result = synced(index.sync())

    assert result.files_removed == 1
    assert "memory/2026-11-03.md" not in paths_in(index)
    hits = index.keyword_candidates("fact 3", 50)
    assert hits and not any(hit.startswith("memory/2026-11-03.md") for hit, _ in hits)
    assert index.status()["files"] == 3


def test_renaming_moves_rows_without_embedding(notes: Path, embedder: CountingEmbedder) -> None:
    index = make_index(notes, embedder)
    index.sync()
    embedder.texts.clear()
    (notes / "memory" / "archive").mkdir()
    (notes / "memory" / "2026-11-01.md").rename(notes / "memory" / "archive" / "2026-11-01.md")

    result = synced(index.sync())

    assert (result.files_changed, result.files_removed, result.embedded) == (1, 1, 0)
    assert embedder.texts == []
    assert "memory/archive/2026-11-01.md" in paths_in(index)
    assert "memory/2026-11-01.md" not in paths_in(index)


def test_text_seen_before_is_not_embedded_again(notes: Path, embedder: CountingEmbedder) -> None:
    index = make_index(notes, embedder)
    index.sync()
    path = notes / "MEMORY.md"
    original = path.read_text()
    path.write_text("# Memory\n- likes coffee now\n")
    index.sync()
    embedder.texts.clear()

    path.write_text(original)  # back to a text the cache table still holds
    result = synced(index.sync())

    assert result.files_changed == 1 and result.embedded == 0


def test_same_size_edit_is_detected_by_hash(notes: Path, embedder: CountingEmbedder) -> None:
    index = make_index(notes, embedder)
    index.sync()
    path = notes / "MEMORY.md"
    before = path.stat()
    path.write_text("# Memory\n- likes rum\n")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # stat() cannot tell
    assert path.stat().st_size == before.st_size

    assert index.is_dirty()
    result = synced(index.sync())

    assert result.files_changed == 1
    assert index.keyword_candidates("rum", 3)[0][0].startswith("MEMORY.md:")


def test_is_dirty_flips_on_edit_new_and_removed_files(
    notes: Path, embedder: CountingEmbedder
) -> None:
    index = make_index(notes, embedder)
    index.sync()
    assert not index.is_dirty()

    (notes / "memory" / "2026-11-02.md").write_text("rewritten\n")
    assert index.is_dirty()
    index.sync()
    assert not index.is_dirty()

    (notes / "memory" / "new.md").write_text("new note\n")
    assert index.is_dirty()
    index.sync()
    (notes / "memory" / "new.md").unlink()
    assert index.is_dirty()


def test_only_memory_markdown_is_indexed(notes: Path, embedder: CountingEmbedder) -> None:
    (notes / "memory" / ".dreams").mkdir()
    (notes / "memory" / ".dreams" / "state.md").write_text("dream state\n")
    (notes / "memory" / "todo.txt").write_text("not markdown\n")
    (notes / "SOUL.md").write_text("persona\n")
    (notes / "memory" / "link.md").symlink_to(notes / "SOUL.md")
    outside = notes.parent / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret\n")
    (notes / "memory" / "linked-dir").symlink_to(outside, target_is_directory=True)
    index = make_index(notes, embedder)

    index.sync()

    assert paths_in(index) == {
        "MEMORY.md",
        "memory/2026-11-01.md",
        "memory/2026-11-02.md",
        "memory/2026-11-03.md",
    }


def test_progress_is_reported(notes: Path, embedder: CountingEmbedder) -> None:
    seen: list[IndexSyncProgress] = []
    index = make_index(notes, embedder)

    index.sync(progress=seen.append)

    assert seen and all(isinstance(p, IndexSyncProgress) for p in seen)
    assert seen[-1].files_total == 4 and seen[-1].embedded == len(embedder.texts)
    assert [p.files_done for p in seen[:4]] == [1, 2, 3, 4]


def chunks_table(workspace: Path) -> Path:
    return workspace / ".cairn" / "index" / "chunks_1.lance"


@pytest.mark.parametrize(
    "damage",
    [
        "garbage_data",
        "no_manifest",
        "no_identity",
        "garbage_identity",
        "no_records",
        "garbage_records",
        "deleted",
    ],
)
def test_a_damaged_index_rebuilds_itself(
    notes: Path, embedder: CountingEmbedder, damage: str
) -> None:
    index = make_index(notes, embedder)
    index.sync()
    expected = index.status()["chunks"]
    index.close()
    folder = notes / ".cairn" / "index"
    if damage == "garbage_data":
        for data in (chunks_table(notes) / "data").glob("*.lance"):
            data.write_bytes(b"\x00garbage" * 64)
    elif damage == "no_manifest":
        for manifest in (chunks_table(notes) / "_versions").iterdir():
            manifest.unlink()
    elif damage == "no_identity":
        (folder / "identity.json").unlink()
    elif damage == "garbage_identity":
        (folder / "identity.json").write_text("{not json")
    elif damage == "no_records":
        (folder / "files_1.json").unlink()
    elif damage == "garbage_records":
        (folder / "files_1.json").write_text('{"generation": 1, "files": [["MEMORY.md", "x"]]}')
    else:
        shutil.rmtree(folder)
    embedder.texts.clear()
    reopened = make_index(notes, embedder)

    events = reopened.sync()

    assert isinstance(events[0], IndexRebuilt)
    assert events[0].reason.startswith("missing" if damage == "deleted" else "corrupt")
    assert synced(events).chunks_total == expected == reopened.status()["chunks"]
    assert reopened.keyword_candidates("tea", 3)[0][0].startswith("MEMORY.md:")
    if damage != "deleted":  # the embedding cache survives damage to the chunks table
        assert embedder.texts == []
    assert [type(e) for e in reopened.sync()] == [IndexSynced]


def test_an_edit_survives_a_reopen_without_rework(notes: Path, embedder: CountingEmbedder) -> None:
    index = make_index(notes, embedder)
    index.sync()
    path = notes / "memory" / "2026-11-02.md"
    file_chunks = sum(1 for p in paths_of_all_rows(index) if p == "memory/2026-11-02.md")
    lines = path.read_text().splitlines(keepends=True)
    lines[25] = "- 2: the owner of project zero changed to Ada\n"
    path.write_text("".join(lines))
    edited = synced(index.sync())
    index.close()
    embedder.texts.clear()

    reopened = make_index(notes, embedder)
    events = reopened.sync()

    assert [type(e) for e in events] == [IndexSynced]
    assert (events[0].files_changed, events[0].embedded) == (0, 0)
    assert reopened.status()["chunks"] == edited.chunks_total  # no stale or doubled rows
    assert reopened.keyword_candidates("Ada", 3)[0][0].startswith("memory/2026-11-02.md:")
    # only the rows the edit changed were rewritten, not the whole file's
    assert 0 < reopened.status()["fts_unindexed_rows"] < file_chunks
    assert file_chunks > 2


def test_an_edit_and_a_delete_in_one_sync_reach_the_disk(
    notes: Path, embedder: CountingEmbedder
) -> None:
    index = make_index(notes, embedder)
    index.sync()
    (notes / "memory" / "2026-11-01.md").write_text(daily(1).replace("fact number 3 ", "Zed "))
    (notes / "memory" / "2026-11-03.md").unlink()
    result = synced(index.sync())
    index.close()

    reopened = make_index(notes, embedder)

    assert (result.files_changed, result.files_removed) == (1, 1)
    assert [type(e) for e in reopened.sync()] == [IndexSynced]
    assert reopened.status()["chunks"] == result.chunks_total
    assert paths_in(reopened) == {"MEMORY.md", "memory/2026-11-01.md", "memory/2026-11-02.md"}
    assert reopened.keyword_candidates("Zed", 3)[0][0].startswith("memory/2026-11-01.md:")
    assert not any(
        hit.startswith("memory/2026-11-03.md")
        for hit, _ in reopened.keyword_candidates("fact 3", 50)
    )


def paths_of_all_rows(index: MemoryIndex) -> list[str]:
    hits = index.vector_candidates(index.embedder.embed_query("fact"), 10_000)
    return [chunk.path for chunk in index.chunks([h for h, _ in hits]).values()]


def test_an_index_of_the_previous_layout_is_rebuilt(
    notes: Path, embedder: CountingEmbedder
) -> None:
    import lancedb
    import pyarrow as pa

    make_index(notes, embedder).sync()
    folder = notes / ".cairn" / "index"
    # schema 1 kept the file records in a files_<gen> LanceDB table, not in files_<gen>.json
    records = json.loads((folder / "files_1.json").read_text())["files"]
    (folder / "files_1.json").unlink()
    columns = ["path", "size", "mtime_ns", "hash", "checked_ns"]
    lancedb.connect(str(folder)).create_table(
        "files_1", pa.table({name: [row[i] for row in records] for i, name in enumerate(columns)})
    )
    identity = json.loads((folder / "identity.json").read_text())
    (folder / "identity.json").write_text(json.dumps(identity | {"schema_version": 1}))
    embedder.texts.clear()
    upgraded = make_index(notes, embedder)

    events = upgraded.sync()

    assert isinstance(events[0], IndexRebuilt)
    assert f"schema_version 1->{SCHEMA_VERSION}" in events[0].reason
    assert embedder.texts == []  # the embedding cache outlives the layout change
    assert upgraded.keyword_candidates("tea", 3)[0][0].startswith("MEMORY.md:")
    names = {p.name for p in folder.iterdir()}
    assert "files_2.json" in names and "chunks_2.lance" in names
    assert not names & {"files_1.lance", "files_1.json", "chunks_1.lance"}
    assert [type(e) for e in upgraded.sync()] == [IndexSynced]


def test_a_half_built_generation_is_never_used(notes: Path, embedder: CountingEmbedder) -> None:
    index = make_index(notes, embedder)
    index.sync()
    (notes / "memory" / "2026-11-04.md").write_text("brand new text\n")
    embedder.fail = True
    with pytest.raises(EmbeddingFailed):
        index.rebuild("user asked")  # dies after generation 2's table and records exist
    folder = notes / ".cairn" / "index"
    assert (folder / "files_2.json").exists()
    index.close()
    embedder.fail = False

    reopened = make_index(notes, embedder)

    assert reopened.status()["generation"] == 1
    assert "memory/2026-11-04.md" not in paths_in(reopened)
    assert not (folder / "files_2.json").exists() and not (folder / "chunks_2.lance").exists()
    assert synced(reopened.sync()).files_changed == 1
    assert "memory/2026-11-04.md" in paths_in(reopened)


def test_chunking_change_rebuilds_into_a_new_generation(
    notes: Path, embedder: CountingEmbedder
) -> None:
    make_index(notes, embedder, chunk_tokens=8).sync()
    before = len(embedder.texts)
    index = make_index(notes, embedder, chunk_tokens=120, context_tokens=20)

    events = index.sync()

    assert isinstance(events[0], IndexRebuilt)
    assert "chunk_tokens 8->120" in events[0].reason
    assert index.status()["generation"] == 2
    assert 0 < len(embedder.texts) - before  # new chunk texts needed new vectors
    tables = {p.name for p in (notes / ".cairn" / "index").iterdir()}
    assert "chunks_2.lance" in tables and "chunks_1.lance" not in tables
    assert index.keyword_candidates("tea", 3)[0][0].startswith("MEMORY.md:")


def test_manual_rebuild_reuses_cached_vectors(notes: Path, embedder: CountingEmbedder) -> None:
    index = make_index(notes, embedder)
    index.sync()
    embedder.texts.clear()

    events = index.rebuild("user asked")

    assert events[0] == IndexRebuilt(reason="user asked")
    assert synced(events).embedded == 0 and embedder.texts == []
    assert index.status()["generation"] == 2


def test_a_failing_embedder_leaves_the_index_unchanged(
    notes: Path, embedder: CountingEmbedder
) -> None:
    index = make_index(notes, embedder)
    index.sync()
    (notes / "memory" / "2026-11-04.md").write_text("brand new text\n")
    embedder.fail = True

    with pytest.raises(EmbeddingFailed, match="model crashed"):
        index.sync()

    assert "memory/2026-11-04.md" not in paths_in(index)
    embedder.fail = False
    assert synced(index.sync()).files_changed == 1
    assert "memory/2026-11-04.md" in paths_in(index)


async def test_watcher_reports_an_edit_once(notes: Path) -> None:
    calls: list[set[str]] = []
    first_call = asyncio.Event()

    def on_change(paths: set[str]) -> None:
        calls.append(paths)
        first_call.set()

    watcher = MemoryWatcher(notes, debounce_s=0.3)
    task = asyncio.create_task(watcher.run(on_change))
    await asyncio.wait_for(watcher.started(), 30)

    (notes / ".cairn").mkdir(exist_ok=True)
    (notes / ".cairn" / "noise").write_text("ignored")
    (notes / "memory" / "2026-11-02.md").write_text("edited in an editor\n")
    (notes / "memory" / "2026-11-02.md").write_text("edited twice\n")
    await asyncio.wait_for(first_call.wait(), 15)
    await asyncio.sleep(1.0)  # a second, spurious call would arrive in this window
    watcher.stop()
    await asyncio.wait_for(task, 10)

    assert calls == [{"memory/2026-11-02.md"}]


async def test_watcher_awaits_an_async_callback(notes: Path) -> None:
    done = asyncio.Event()
    seen: list[set[str]] = []

    async def on_change(paths: set[str]) -> None:
        await asyncio.sleep(0)
        seen.append(paths)
        done.set()

    watcher = MemoryWatcher(notes, debounce_s=0.2)
    task = asyncio.create_task(watcher.run(on_change))
    await asyncio.wait_for(watcher.started(), 30)
    (notes / "MEMORY.md").write_text("# Memory\n- likes mate\n")
    await asyncio.wait_for(done.wait(), 15)
    watcher.stop()
    await asyncio.wait_for(task, 10)

    assert seen == [{"MEMORY.md"}]


def test_dropping_generations_sweeps_old_records_and_killed_writes_temp_files(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "index"
    folder.mkdir()
    for name in (
        "identity.json",
        "files_1.json",
        "files_2.json",
        "files_2.json.tmp",  # left by a killed write of an older version
        ".files_2.json.0a1b2c3d.tmp",  # left by a killed shell.fsio.write_atomically
    ):
        (folder / name).write_text("{}")

    LanceStore(folder, dim=8).drop_other_generations(2)

    assert sorted(p.name for p in folder.iterdir()) == ["files_2.json", "identity.json"]


def stop_after_first_batch(seen: list[IndexSyncProgress]) -> Callable[[IndexSyncProgress], None]:
    """A progress callback that stops the sync once something was embedded (quitting)."""

    def progress(event: IndexSyncProgress) -> None:
        seen.append(event)
        if event.embedded:
            raise SyncCancelled

    return progress


def test_a_stopped_sync_leaves_the_index_as_it_was_and_keeps_what_it_embedded(
    notes: Path, embedder: CountingEmbedder
) -> None:
    index = make_index(notes, embedder)
    index.sync()
    (notes / "memory" / "2026-11-09.md").write_text(daily(9, lines=150))
    before = len(embedder.texts)

    seen: list[IndexSyncProgress] = []
    with pytest.raises(SyncCancelled):
        index.sync(progress=stop_after_first_batch(seen))
    embedded_then = len(embedder.texts) - before
    assert 0 < embedded_then < 150
    assert "memory/2026-11-09.md" not in paths_in(index)  # the tables did not change

    events = index.sync()
    assert "memory/2026-11-09.md" in paths_in(index)
    assert synced(events).embedded == len(embedder.texts) - before - embedded_then
    assert set(embedder.texts[before : before + embedded_then]).isdisjoint(
        embedder.texts[before + embedded_then :]
    )  # nothing embedded twice


def test_a_first_build_stopped_half_way_resumes_from_the_cache(
    notes: Path, embedder: CountingEmbedder
) -> None:
    (notes / "memory" / "2026-11-09.md").write_text(daily(9, lines=150))
    with pytest.raises(SyncCancelled):
        make_index(notes, embedder).sync(progress=stop_after_first_batch([]))
    embedded_then = len(embedder.texts)

    reopened = make_index(notes, embedder)  # as the next session would
    events = reopened.sync()
    assert synced(events).chunks_total > embedded_then
    assert len(embedder.texts) == synced(events).chunks_total  # each text embedded once


def test_invalid_utf8_binary_and_enormous_lines_are_indexed_safely(
    notes: Path, embedder: CountingEmbedder
) -> None:
    from shell.memory.search import MemorySearch

    memory = notes / "memory"
    (memory / "2026-11-20.md").write_bytes(
        b"- caf\xe9 au lait \xff\xfe on Fridays\n- \x80 broken\n"
    )
    (memory / "2026-11-21.md").write_bytes(bytes(range(256)) * 40)  # binary, NULs included
    (memory / "2026-11-22.md").write_text("- " + "gigantic " * 400_000 + "\n- after the wall\n")
    index = make_index(notes, embedder)

    synced(index.sync())

    assert {"memory/2026-11-20.md", "memory/2026-11-21.md", "memory/2026-11-22.md"} <= set(
        index.paths()
    )
    found = MemorySearch(index).search("after the wall", min_score=0.0)
    assert any(hit.path == "memory/2026-11-22.md" for hit in found.hits)
    assert all(len(text) < 20_000 for text in embedder.texts)  # enormous lines were split

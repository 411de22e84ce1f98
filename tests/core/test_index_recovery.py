"""Index self-healing and identity: a damaged or outdated index rebuilds itself, edits reach the
disk and survive a reopen, generations are built whole and swept, and a failing embedder or a
stopped sync leaves the index as it was."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from shell.events import IndexRebuilt, IndexSynced, IndexSyncProgress
from shell.memory.index.memory_index import EmbeddingFailed, MemoryIndex
from shell.memory.index.store import SCHEMA_VERSION, LanceStore
from shell.memory.index.writer import SyncCancelled
from tests.core.index_helpers import CountingEmbedder, daily, make_index, paths_in, synced


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

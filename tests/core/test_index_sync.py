"""Index freshness: incremental sync, the embedding cache, what is indexed, progress, the
watcher, and awkward file contents."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from shell.events import IndexSyncProgress
from shell.memory.index.coherence import with_follows
from shell.memory.index.watch import MemoryWatcher
from tests.core.index_helpers import CountingEmbedder, make_index, paths_in, synced


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


async def test_watcher_reports_a_burst_of_edits_once(notes: Path) -> None:
    """Edits further apart than watchfiles' 100 ms step reach the watcher as changes of their
    own: its debounce makes them one call, and the noise under .cairn none. An edit after that
    call is the barrier: a second call for the burst would come before the barrier's."""
    calls: asyncio.Queue[set[str]] = asyncio.Queue()
    watcher = MemoryWatcher(notes, debounce_s=3.0)
    task = asyncio.create_task(watcher.run(calls.put_nowait))
    await asyncio.wait_for(watcher.started(), 30)

    (notes / ".cairn").mkdir(exist_ok=True)
    (notes / ".cairn" / "noise").write_text("ignored")
    for text in ("edited in an editor\n", "edited twice\n", "edited a third time\n"):
        (notes / "memory" / "2026-11-02.md").write_text(text)
        await asyncio.sleep(0.3)  # past watchfiles' step, well within the debounce
    burst = await asyncio.wait_for(calls.get(), 15)
    (notes / "memory" / "2026-11-03.md").write_text("after the burst\n")
    barrier = await asyncio.wait_for(calls.get(), 15)
    watcher.stop()
    await asyncio.wait_for(task, 10)

    assert [burst, barrier] == [{"memory/2026-11-02.md"}, {"memory/2026-11-03.md"}]


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


def test_invalid_utf8_binary_and_enormous_lines_are_indexed_safely(
    notes: Path, embedder: CountingEmbedder
) -> None:
    from shell.memory.search.pipeline import MemorySearch

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

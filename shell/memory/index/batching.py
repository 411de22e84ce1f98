"""How a sync's units are cut: at most `MAX_FILE_UNITS` a file, committed in batches of files.

A batch bounds what a sync holds beyond the index itself (its units, their vectors and their rows
on the way to the table), and the embedding cache keeps each batch's vectors as it goes, so a
sync killed half-way redoes at most the batch in flight.
"""

from __future__ import annotations

from collections.abc import Iterator

from shell.events import CappedFile
from shell.memory.index.chunking import Chunk
from shell.memory.index.embedding_cache import KEEP_EVERY
from shell.memory.index.vector_matrix import VectorMatrix

BATCH_UNITS = KEEP_EVERY
"""Units embedded and committed together: whole files, about this many units a batch."""
MAX_FILE_UNITS = 20_000
"""Most units one file may put in the index (about 40 s of embedding with MiniLM here): a file
past it (a 50 MB MEMORY.md that came with a sync) is indexed up to there, and `capped_files`
names it."""


def batches(per_file: dict[str, list[Chunk]], size: int) -> Iterator[dict[str, list[Chunk]]]:
    """Whole files in order, `size` units or more a batch (the last may hold fewer).

    Each file leaves `per_file` as its batch is made, so units are freed as batches commit.
    """
    batch: dict[str, list[Chunk]] = {}
    units = 0
    for path in list(per_file):
        batch[path] = per_file.pop(path)
        units += len(batch[path])
        if units >= size:
            yield batch
            batch, units = {}, 0
    if batch:
        yield batch


def capped_files(vectors: VectorMatrix) -> list[CappedFile]:
    """The files indexed only up to `MAX_FILE_UNITS` units, by path, with the last line indexed."""
    return [
        CappedFile(path, max(vectors.chunks[i].end_line for i in ids))
        for path, ids in sorted(vectors.ids_by_path.items())
        if len(ids) >= MAX_FILE_UNITS
    ]

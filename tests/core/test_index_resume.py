"""A sync killed half-way (SIGKILL: no `finally` runs) resumes: what it embedded was kept.

A real index, the real HashEmbedder and a real kill of a child process in the middle of the
embedding; then the same workspace synced again in this process, counting what is embedded.
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from shell.events import IndexSyncProgress
from shell.headless.progress import ProgressLines, describe_progress
from shell.memory.index.batching import BATCH_UNITS
from shell.memory.index.embedding_cache import EMBED_BATCH
from tests.core.index_helpers import CountingEmbedder, make_index, synced

REPO = Path(__file__).resolve().parents[2]
NOTES, LINES = 40, 50  # 2,000 distinct units: the kill comes after 1,280 were embedded
KILL_AFTER_BATCHES = 20

CHILD = f"""
import os, signal, sys
from pathlib import Path
from shell.memory.index.embed import HashEmbedder
from shell.memory.index.memory_index import MemoryIndex

class Dying(HashEmbedder):
    calls = 0
    def embed(self, texts):
        Dying.calls += 1
        if Dying.calls > {KILL_AFTER_BATCHES}:
            os.kill(os.getpid(), signal.SIGKILL)
        return super().embed(texts)

index = MemoryIndex(Path(sys.argv[1]), Dying(), chunk_tokens=60, context_tokens=10)
index.sync(trigger="manual")
"""


def _notes(workspace: Path) -> None:
    (workspace / "memory").mkdir(parents=True)
    for n in range(NOTES):
        text = "".join(f"- note {n} line {i}: the fact {n * LINES + i}\n" for i in range(LINES))
        (workspace / "memory" / f"2026-01-{n % 28 + 1:02d}-{n}.md").write_text(text)


def test_a_killed_rebuild_resumes_without_embedding_again(tmp_path: Path) -> None:
    _notes(tmp_path)
    killed = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path)], cwd=REPO, capture_output=True, check=False
    )
    assert killed.returncode == -9, killed.stderr

    embedder = CountingEmbedder()
    events = make_index(tmp_path, embedder).sync(trigger="manual")

    total = NOTES * LINES
    embedded_before_kill = KILL_AFTER_BATCHES * EMBED_BATCH
    batch = -(-BATCH_UNITS // LINES) * LINES  # whole notes, until a batch has BATCH_UNITS
    kept = embedded_before_kill // batch * batch  # each batch's vectors are kept as it commits
    assert kept > 0
    assert synced(events).chunks_total == total
    assert len(embedder.texts) == total - kept  # only the batch in flight is embedded again


def test_progress_lines_say_what_is_left_and_stay_quiet_at_first() -> None:
    err = io.StringIO()
    clock = iter([0.0, 0.5, 1.5, 1.6, 3.0])
    lines = ProgressLines(err, timer=lambda: next(clock))
    lines(IndexSyncProgress(1, 10, 5, 0))  # 0.5 s: too soon
    lines(IndexSyncProgress(10, 10, 50, 0))  # 1.5 s: printed
    lines(IndexSyncProgress(10, 10, 50, 10, 40))  # 1.6 s: too soon after the last
    lines(IndexSyncProgress(10, 10, 50, 20, 40))  # 3.0 s: printed
    assert err.getvalue().splitlines() == [
        "cairn: indexing 10/10 files",
        "cairn: embedding 20/40 texts (50%), kept as it goes: an interrupted run resumes",
    ]
    assert "1,024/150,000" in describe_progress(IndexSyncProgress(9, 9, 9, 1024, 150_000))

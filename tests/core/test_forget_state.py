"""`forget` in one workspace without a remote: the line leaves the file, the history, the real
LanceDB index (rows and files), the hit log, dream state and transcripts, and no git object
holds it after; the tombstone holds no text. And what a tombstone is."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from shell.events import MemoryForgotten, SearchHit
from shell.forget import ForgetError, Identity, forget, objects_holding
from shell.git.runner import Git
from shell.git.store import GitStore
from shell.memory.files.door import MemoryFiles
from shell.memory.files.values import Edit, MemoryWriteError
from shell.memory.forget.tombstones import (
    EMPTY,
    FILE,
    TombstoneError,
    drop_forgotten,
    forgettable,
    line_hash,
    normal_form,
    parse,
    render,
)
from shell.memory.hit_log import HitLog, dreams_dir
from shell.memory.index.memory_index import MemoryIndex
from shell.workspace import seed_workspace
from tests.conftest import Clock
from tests.core.index_helpers import CountingEmbedder

SECRET = "Kari's door code is 4471"
WHO = Identity("T", "t@example.org")


def _workspace(root: Path, clock: Clock) -> GitStore:
    created = seed_workspace(root)
    store = GitStore(root, author_name="T", author_email="t@example.org", clock=clock)
    store.ensure_repo()
    assert store.commit(created, "workspace: seed").error is None
    return store


def _holding(root: Path) -> list[str]:
    wanted = SECRET.lower().encode()
    return [
        str(path.relative_to(root))
        for path in root.rglob("*")
        if path.is_file()
        and ".git" not in path.relative_to(root).parts
        and wanted in path.read_bytes().lower()
    ]


def test_every_trace_of_the_line_goes(tmp_path: Path, clock: Clock) -> None:
    root = tmp_path / "ws"
    store = _workspace(root, clock)
    memory = root / "MEMORY.md"
    memory.write_text(memory.read_text() + f"\n- {SECRET}\n- Kari likes tea\n")
    assert store.commit(["MEMORY.md"], f"memory(tool): remember '{SECRET}'").error is None
    number = memory.read_text().splitlines().index(f"- {SECRET}") + 1
    index = MemoryIndex(root, CountingEmbedder(), clock=clock)
    index.sync()
    assert _holding(root / ".cairn" / "index")  # LanceDB keeps the text in its files
    hits = HitLog(dreams_dir(root), clock)
    hits.record("door code", [_hit("MEMORY.md", number), _hit("MEMORY.md", 1)])
    hits.fold()
    hits.record("door code again", [_hit("MEMORY.md", number)])
    dreams = dreams_dir(root)
    (dreams / "proposals.json").write_text(
        json.dumps(
            {
                "version": 1,
                "records": {
                    "p1": {"proposal": {"text": SECRET}},
                    "p2": {"proposal": {"text": "x"}},
                },
                "dreamed": [normal_form(SECRET), "other"],
            }
        )
    )
    np.savez(dreams / "vectors.npz", keys=np.array(["k"]), vectors=np.zeros((1, 2)))
    sessions = root / ".cairn" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "one.jsonl").write_text(json.dumps({"text": f"noted: {SECRET.upper()}"}) + "\n")

    preview = forget(root, place=f"MEMORY.md:{number}", apply=False, identity=WHO)
    assert isinstance(preview[-1], MemoryForgotten) and not preview[-1].applied
    assert preview[-1].places == [f"MEMORY.md:{number}"] and SECRET in memory.read_text()
    done = forget(root, place=f"MEMORY.md:{number}", apply=True, identity=WHO, index=index)[-1]

    assert isinstance(done, MemoryForgotten) and done.applied
    assert done.commits == 1 and done.files == ["MEMORY.md"]  # the commit that remembered it
    assert done.index_rows == 1 and done.transcripts == 1
    assert done.hit_log_entries == 2  # its unit in the store, its hit in the log
    assert done.dream_entries == 3  # the proposal, the dreamed line, the vector cache
    assert done.objects_pruned
    index.close()
    assert _holding(root) == []
    assert "Kari likes tea" in memory.read_text()
    assert all(SECRET not in chunk.text for chunk in index.file_units("MEMORY.md")[0])
    assert [unit.start_line for unit in hits.recalled()] == [1]
    stored = json.loads((dreams / "proposals.json").read_text())
    assert list(stored["records"]) == ["p2"] and stored["dreamed"] == ["other"]
    assert objects_holding(Git(root), {normal_form(SECRET)}) == 0
    tombstones = (root / FILE).read_text()
    assert line_hash(SECRET) in tombstones and "kari" not in tombstones.lower()


def test_no_door_writes_the_line_back(tmp_path: Path, clock: Clock) -> None:
    root = tmp_path / "ws"
    store = _workspace(root, clock)
    memory = root / "MEMORY.md"
    memory.write_text(memory.read_text() + f"- {SECRET}\n")
    store.commit(["MEMORY.md"], "remember")
    forget(root, text=SECRET, apply=True, identity=WHO)
    door = MemoryFiles(root, store)
    before = door.text("MEMORY.md")

    with pytest.raises(MemoryWriteError, match="forgotten"):
        door.append("memory/2026-11-30.md", f"* {SECRET.lower()}!", reason="tool")
    door.read("MEMORY.md")
    written = door.write("MEMORY.md", before + f"- {SECRET}\n- new\n", reason="tool").event
    [accepted] = door.rewrite(
        [Edit("MEMORY.md", door.text("MEMORY.md"), door.text("MEMORY.md") + f"{SECRET}.\n")],
        reason="dream",
        summary="promote a proposal",
    )

    assert written.lines_forgotten == 1 and written.lines_added == 1
    assert accepted.event.outcome == "unchanged" or accepted.event.lines_added == 0
    assert _holding(root) == []


def test_a_line_only_a_transcript_still_holds_is_scrubbed(tmp_path: Path, clock: Clock) -> None:
    root = tmp_path / "ws"
    _workspace(root, clock)
    traces = root / ".cairn" / "traces"
    traces.mkdir(parents=True)
    (traces / "t.jsonl").write_text(json.dumps({"said": f"ok: {SECRET}"}) + "\n")

    done = forget(root, text=SECRET, apply=True, identity=WHO)[-1]

    assert isinstance(done, MemoryForgotten) and done.transcripts == 1 and done.commits == 0
    assert _holding(root) == []


def test_forgetting_what_is_already_gone_is_refused(tmp_path: Path, clock: Clock) -> None:
    root = tmp_path / "ws"
    _workspace(root, clock)
    with pytest.raises(ForgetError, match="in no file"):
        forget(root, text="a line never written here", apply=True, identity=WHO)
    assert not (root / FILE).exists()


def test_the_normal_form_and_the_runs_of_words() -> None:
    one = forgettable("- Kari lives in Oslo.")
    assert normal_form("  *  KARI   lives in oslo!! ") == "kari lives in oslo"
    assert normal_form("1. [x] 'Kari lives in Oslo'") == "kari lives in oslo"
    assert one.holds("kari lives in oslo")
    assert one.holds("remember: Kari lives in Oslo, near the fjord")
    assert not one.holds("Kari lived in Oslo")
    assert not one.holds("Kari lives in Oslove")
    assert drop_forgotten("a\nKari  lives in OSLO\nb\n", one) == ("a\nb\n", 1)


def test_the_file_round_trips_and_holds_no_text() -> None:
    both = forgettable("Kari lives in Oslo") | forgettable("Bob likes green tea")
    text = render(both)
    assert parse(text) == both
    assert "kari" not in text.lower() and "oslo" not in text.lower()


@pytest.mark.parametrize(
    "text",
    [
        "sha256:zz words:3",
        f"sha256:{EMPTY} words:2",
        f"sha256:{'b' * 64} words:1",
        f"sha256:{'b' * 64} words:999",
        f"sha256:{'B' * 64} words:3",
        f"sha256:{'b' * 64}",
        "Kari lives in Oslo",
    ],
)
def test_a_tombstone_file_it_cannot_trust_is_refused_whole(text: str) -> None:
    good = f"sha256:{'c' * 64} words:3\n"
    with pytest.raises(TombstoneError):
        parse(good + text + "\n")


def test_a_line_with_nothing_to_forget_is_refused() -> None:
    for line in ("", "   ", "-", "* [ ]", "...", "Oslo"):
        with pytest.raises(TombstoneError):
            forgettable(line)


def _hit(path: str, line: int) -> SearchHit:
    return SearchHit(
        path=path,
        start_line=line,
        end_line=line,
        score=0.5,
        vector_score=0.5,
        text_score=0.0,
        snippet="",
        citation=f"{path}#L{line}",
        unit=f"{path}:{line}:{line}:{line:012d}",
    )

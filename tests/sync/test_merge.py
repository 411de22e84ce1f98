"""Merges that keep every line: daily notes as a union, curated files cleanly or for review."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from shell.events.memory import MemoryWritten
from shell.events.sync import SyncConflict, SyncFinished, SyncResolved
from tests.conftest import Clock
from tests.sync.conftest import DAY, Machine, git, has_markers

MEMORY = "MEMORY.md"
CURATED = (
    "# MEMORY.md\n\n## Preferences\n- tea, not coffee\n\n"
    "## People\n- Ana runs infra\n\n## Projects\n- cairn\n"
)


def test_same_days_note_written_on_both_sides_is_a_union_with_each_line_once(
    pair: tuple[Machine, Machine],
) -> None:
    a, b = pair
    a.append(DAY, "- from a: the deploy is on Friday", "- both: standup moved to 10:00")
    b.append(DAY, "- from b: Ana owns the release", "- both: standup moved to 10:00")

    assert isinstance(a.engine.sync()[-1], SyncFinished)
    finished = b.engine.sync()[-1]
    assert isinstance(finished, SyncFinished)
    assert finished.pulled_commits == 1 and finished.pushed_commits == 2
    assert finished.changed == [DAY] and finished.conflicts == []
    assert isinstance(a.engine.sync()[-1], SyncFinished)

    for side in (a, b):
        text = side.text(DAY)
        assert not has_markers(text)
        for line in ("- from a: the deploy", "- from b: Ana owns", "- both: standup"):
            assert text.count(line) == 1, (side.root.name, text)
    assert a.text(DAY) == b.text(DAY)
    assert git(b.root, "status", "--porcelain") == ""
    assert "merge=union" in a.text(".gitattributes")


def test_clean_memory_merge_is_taken(pair: tuple[Machine, Machine]) -> None:
    a, b = pair
    a.write(MEMORY, CURATED)
    a.engine.sync()
    b.engine.sync()
    a.write(MEMORY, CURATED.replace("tea, not coffee", "green tea, not coffee"))
    b.write(MEMORY, CURATED.replace("- cairn\n", "- cairn\n- sync through git\n"))

    a.engine.sync()
    events = b.engine.sync()

    assert not [event for event in events if isinstance(event, SyncConflict)]
    assert isinstance(events[-1], SyncFinished) and events[-1].changed == [MEMORY]
    merged = b.text(MEMORY)
    assert "green tea, not coffee" in merged and "- sync through git" in merged
    assert not has_markers(merged)
    a.engine.sync()
    assert a.text(MEMORY) == merged


def _conflicted(pair: tuple[Machine, Machine]) -> tuple[Machine, Machine, SyncConflict]:
    a, b = pair
    a.write(MEMORY, CURATED)
    a.engine.sync()
    b.engine.sync()
    a.write(MEMORY, CURATED.replace("tea, not coffee", "coffee after all"))
    b.write(MEMORY, CURATED.replace("tea, not coffee", "mate, every morning"))
    a.engine.sync()
    events = b.engine.sync()
    conflicts = [event for event in events if isinstance(event, SyncConflict)]
    assert len(conflicts) == 1, events
    finished = events[-1]
    assert isinstance(finished, SyncFinished) and finished.conflicts == [MEMORY]
    return a, b, conflicts[0]


def test_memory_conflict_holds_both_sides_without_markers_and_is_reported(
    pair: tuple[Machine, Machine],
) -> None:
    _, b, conflict = _conflicted(pair)

    local = b.text(MEMORY)
    assert local.index("mate, every morning") < local.index("coffee after all")
    assert not has_markers(local) and local.count("- Ana runs infra") == 1
    assert "Cairn-Held: MEMORY.md" in git(b.root, "log", "-1", "--format=%B")
    assert git(b.root, "status", "--porcelain") == ""
    assert not (b.root / ".git" / "MERGE_HEAD").exists()
    side = (b.root / conflict.side_file).read_text(encoding="utf-8")
    assert "coffee after all" in side
    assert conflict.side_file.startswith(".cairn/sync/conflicts/")
    assert "-- mate, every morning" in conflict.diff and "+- coffee after all" in conflict.diff
    assert conflict.remote_sha == git(b.root, "rev-parse", "HEAD^2")
    assert conflict.local_sha == git(b.root, "rev-parse", "HEAD^1")
    assert b.engine.status().conflicts == [MEMORY]
    assert git(b.root, "check-ignore", conflict.side_file)


@pytest.mark.parametrize("take", ["local", "remote", "both"])
def test_resolve_settles_a_conflict_as_a_new_commit(
    pair: tuple[Machine, Machine], take: str
) -> None:
    a, b, conflict = _conflicted(pair)
    before = b.head()

    events = b.engine.resolve(MEMORY, take)  # type: ignore[arg-type]

    resolved = events[-1]
    assert isinstance(resolved, SyncResolved) and resolved.take == take
    written = [event for event in events if isinstance(event, MemoryWritten)]
    if resolved.commit is None:
        assert written == []
    else:  # the resolution's commit is a memory write: the panes and the git log show it
        assert [(e.path, e.reason, e.commit) for e in written] == [(MEMORY, "resolve", b.head())]
        assert written[0].bytes == len((b.root / MEMORY).read_bytes())
    text = b.text(MEMORY)
    if take == "local":
        assert resolved.commit == b.head() != before
        assert "mate, every morning" in text and "coffee after all" not in text
    elif take == "remote":
        assert resolved.commit == b.head() != before
        assert "coffee after all" in text and "mate, every morning" not in text
    else:  # the file already holds both
        assert resolved.commit is None and b.head() == before
        assert text.index("mate, every morning") < text.index("coffee after all")
        assert text.count("- Ana runs infra") == 1
    assert not (b.root / conflict.side_file).exists()
    assert b.engine.status().conflicts == []
    b.engine.sync()
    a.engine.sync()
    assert a.text(MEMORY) == text


def test_adding_a_remote_merges_both_histories(
    bare: Path, machine: Callable[[str], Machine], clock: Clock
) -> None:
    a = machine("a").seed()
    a.append(DAY, "- a: first machine")
    a.engine.add_remote(str(bare))
    published = a.head()
    clock.advance(minutes=5)  # else both seed commits are the same commit
    c = machine("c").seed()
    c.append(DAY, "- c: seeded apart")
    c.append("memory/2026-11-29.md", "- c: the day before")
    own = c.head()

    events = c.engine.add_remote(str(bare))

    finished = events[-1]
    assert isinstance(finished, SyncFinished), events
    assert finished.pulled_commits == 2 and finished.pushed_commits == 4
    assert git(c.root, "merge-base", published, own, check=False) == ""
    assert git(c.root, "merge-base", "--is-ancestor", published, "HEAD") == ""
    assert git(c.root, "merge-base", "--is-ancestor", own, "HEAD") == ""
    note = c.text(DAY)
    assert "- a: first machine" in note and "- c: seeded apart" in note
    assert git(bare, "rev-parse", "main") == c.head()
    a.engine.sync()
    assert a.text("memory/2026-11-29.md") == "- c: the day before\n"


@pytest.mark.parametrize(
    ("take", "expected"), [("local", "- mine\n"), ("both", "- mine\n- theirs\n")]
)
def test_a_record_left_by_an_older_version_settles_as_it_did(
    pair: tuple[Machine, Machine], take: str, expected: str
) -> None:
    from shell.sync.state import ConflictRecord, save_conflict, side_file_for

    a, _ = pair
    a.write(MEMORY, "- mine\n")  # the old merge kept the local file as it was
    record = ConflictRecord(MEMORY, a.head(), a.head(), side_file_for(MEMORY), "diff")
    save_conflict(a.root, record, b"- theirs\n")

    resolved = a.engine.resolve(MEMORY, take)  # type: ignore[arg-type]

    assert isinstance(resolved[-1], SyncResolved) and a.text(MEMORY) == expected
    assert a.engine.status().conflicts == []

"""The line rules of a held conflict: the union it holds, a clean deletion, the record joined."""

from __future__ import annotations

from shell.sync.merge import only_in, only_removed, union_of
from shell.sync.state import ConflictRecord

BASE = b"# M\n- one\n- two\n"


def test_the_union_is_local_then_the_remote_lines_it_lacks() -> None:
    assert union_of(b"# M\n- mine\n", b"# M\n- theirs\n\n- mine\n") == b"# M\n- mine\n- theirs\n"
    assert union_of(b"# M\n- x", b"- y\n") == b"# M\n- x\n- y\n"
    assert only_in(b"# M\n- mine\n\n", b"# M\n- theirs\n") == ("- mine",)


def test_a_pure_deletion_beside_an_append_merges_as_both_changes() -> None:
    removed = b"# M\n- two\n"
    appended = BASE + b"- three\n"
    assert only_removed(BASE, removed, appended) == b"# M\n- two\n- three\n"
    assert only_removed(BASE, appended, removed) is None  # an append is not a deletion
    edited = b"# M\n- one, changed\n- two\n"
    assert only_removed(BASE, removed, edited) is None  # the other side changed that line


def test_a_conflict_met_again_keeps_the_lines_of_every_merge() -> None:
    first = ConflictRecord("MEMORY.md", "l1", "r1", "side", "d1", held=True,
                           local_only=["- b0"], remote_only=["- a0"])  # fmt: skip
    later = ConflictRecord("MEMORY.md", "l2", "r2", "side", "d2", held=True,
                           local_only=["- b1"], remote_only=["- a1", "- a0"])  # fmt: skip
    joined = first.joined(later)
    assert (joined.local_sha, joined.remote_sha, joined.diff) == ("l1", "r2", "d2")
    assert joined.local_only == ["- b0", "- b1"] and joined.remote_only == ["- a0", "- a1"]


def test_what_a_conflict_holds_keeps_both_sides_and_each_sides_removals() -> None:
    from shell.sync.merge import held_lines

    local = b"# M\n- two\n- mine\n"  # removed "- one", appended a line
    remote = b"# M\n- one\n- theirs\n"  # removed "- two", appended a line
    assert held_lines(BASE, local, remote) == b"# M\n- mine\n- theirs\n"
    assert held_lines(BASE, BASE + b"- mine\n", BASE + b"- theirs\n") == (
        BASE + b"- mine\n- theirs\n"
    )

"""The push scan reads what a push sends, as bytes: what git calls binary, what `.gitattributes`
hides from a diff, file names and commit messages. Real git, a bare remote, nothing mocked."""

from __future__ import annotations

from pathlib import Path

import pytest

from shell.events import Notice
from shell.events.sync import SyncFailed, SyncFinished
from tests.sync.conftest import DAY, Machine, git

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
AWS = "AKIAIOSFODNN7REALKEY"


def commit_bytes(machine: Machine, rel: str, data: bytes, message: str = "") -> None:
    path = machine.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    assert machine.store.commit([rel], message or f"write {rel}").error is None


def blocked(machine: Machine, bare: Path) -> SyncFailed:
    published = git(bare, "rev-parse", "main")
    events = machine.engine.sync()
    failed = events[-1]
    assert isinstance(failed, SyncFailed) and failed.kind == "secret", events
    assert git(bare, "rev-parse", "main") == published, "nothing was pushed"
    assert TOKEN not in repr(events) and AWS not in repr(events)
    return failed


def test_a_note_with_a_nul_byte_is_read_as_bytes(bare: Path, pair: tuple[Machine, Machine]) -> None:
    a, _ = pair
    commit_bytes(a, DAY, b"- a note\n\x00\x01binary?\n- token " + TOKEN.encode() + b"\n")

    failed = blocked(a, bare)

    assert f"{DAY}:3" in failed.message and "GitHub Token" in failed.message


def test_a_gitattributes_that_hides_notes_from_diffs_hides_nothing(
    bare: Path, pair: tuple[Machine, Machine]
) -> None:
    a, _ = pair
    commit_bytes(a, ".gitattributes", b"*.md -diff\n* binary\n")
    a.append(DAY, "- the key is " + AWS)

    failed = blocked(a, bare)

    assert f"{DAY}:1" in failed.message and "AWS" in failed.message


def test_a_secret_in_a_file_name_stops_the_push_and_is_not_named(
    bare: Path, pair: tuple[Machine, Machine]
) -> None:
    a, _ = pair
    commit_bytes(a, f"memory/{TOKEN}.md", b"- an innocent note\n")

    failed = blocked(a, bare)

    assert "the name memory/[REDACTED GitHub Token].md" in failed.message, failed.message


def test_a_secret_in_a_commit_message_stops_the_push(
    bare: Path, pair: tuple[Machine, Machine]
) -> None:
    a, _ = pair
    commit_bytes(a, DAY, b"- accepted\n", f"memory(dream): accept\n\nsaid: {TOKEN}\n")

    failed = blocked(a, bare)

    assert "the message of commit" in failed.message and "line 3 (GitHub" in failed.message


def test_a_binary_under_memory_is_committed_with_a_notice_and_scanned(
    bare: Path, pair: tuple[Machine, Machine]
) -> None:
    a, _ = pair
    (a.root / "memory" / "keys.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00" + TOKEN.encode())

    events = a.engine.sync()

    notices = [e for e in events if isinstance(e, Notice)]
    assert len(notices) == 1 and "memory/keys.bin" in notices[0].message
    assert notices[0].level == "warning" and "not a Markdown" in notices[0].message
    failed = events[-1]
    assert isinstance(failed, SyncFailed) and failed.kind == "secret"
    assert "memory/keys.bin:3" in failed.message and TOKEN not in repr(events)


def test_utf16_text_and_a_token_spelt_with_nuls_are_found(
    bare: Path, pair: tuple[Machine, Machine]
) -> None:
    a, _ = pair
    commit_bytes(a, "memory/utf16.md", ("- key " + AWS + "\n").encode("utf-16"))
    commit_bytes(a, "memory/spelt.md", b"- " + b"\x00".join(bytes([c]) for c in TOKEN.encode()))

    failed = blocked(a, bare)

    assert "memory/utf16.md:1 (AWS Access Key" in failed.message
    assert "memory/spelt.md:1 (GitHub Token" in failed.message


def test_a_blob_too_big_to_read_is_not_pushed_unread(
    bare: Path, pair: tuple[Machine, Machine], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, _ = pair
    monkeypatch.setattr("shell.secrets.push_scan.MAX_SCANNED_BYTES", 1000)
    commit_bytes(a, "memory/big.md", b"- harmless\n" * 200)

    failed = blocked(a, bare)

    assert "memory/big.md (2,200 bytes, over the 1,000 read" in failed.message


def test_a_secret_removed_in_a_later_commit_still_stops_the_push(
    bare: Path, pair: tuple[Machine, Machine]
) -> None:
    a, _ = pair
    commit_bytes(a, DAY, b"- token " + TOKEN.encode() + b"\n")
    commit_bytes(a, DAY, b"- token gone\n")

    failed = blocked(a, bare)

    assert f"{DAY}:1" in failed.message


def test_what_a_merge_takes_from_the_remote_is_not_ours_to_stop(
    bare: Path, pair: tuple[Machine, Machine], tmp_path: Path
) -> None:
    """A secret another client pushed without a scan has left already: it must not block
    every push of this machine forever (a merge's own changes are still scanned)."""
    _, b = pair
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(bare), str(other))
    (other / "memory").mkdir(exist_ok=True)
    (other / "memory" / "theirs.md").write_text(f"- {TOKEN}\n", encoding="utf-8")
    git(other, "add", "-A")
    git(other, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "theirs")
    git(other, "push", "-q", "origin", "HEAD:main")
    b.append(DAY, "- from b")

    finished = b.engine.sync()[-1]

    assert isinstance(finished, SyncFinished) and finished.pushed_commits == 2, finished


def test_a_replace_ref_does_not_hide_the_object_a_push_sends(
    bare: Path, pair: tuple[Machine, Machine]
) -> None:
    a, _ = pair
    commit_bytes(a, DAY, b"- token " + TOKEN.encode() + b"\n")
    secret = git(a.root, "rev-parse", f"HEAD:{DAY}")
    clean = git(a.root, "hash-object", "-w", "--stdin", "--path", DAY)  # an empty blob
    git(a.root, "replace", secret, clean)
    assert TOKEN not in git(a.root, "show", f"HEAD:{DAY}")  # git itself now shows the clean one

    failed = blocked(a, bare)

    assert f"{DAY}:1" in failed.message


def test_a_secret_in_the_author_stops_the_push(bare: Path, pair: tuple[Machine, Machine]) -> None:
    a, _ = pair
    (a.root / DAY).write_text("- by someone\n", encoding="utf-8")
    git(a.root, "add", DAY)
    git(a.root, "-c", f"user.name={TOKEN}", "-c", "user.email=x@x", "commit", "-qm", "note")

    failed = blocked(a, bare)

    assert "the headers of commit" in failed.message and "line 1 (GitHub" in failed.message


def test_blobs_read_in_small_batches_are_all_scanned(
    bare: Path, pair: tuple[Machine, Machine], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, _ = pair
    monkeypatch.setattr("shell.secrets.push_scan.BATCH_BYTES", 10)
    commit_bytes(a, "memory/one.md", b"- token " + TOKEN.encode() + b"\n")
    commit_bytes(a, "memory/two.md", b"- nothing here\n")
    commit_bytes(a, "memory/three.md", b"- key " + AWS.encode() + b"\n")

    failed = blocked(a, bare)

    assert "memory/one.md:1" in failed.message and "memory/three.md:1" in failed.message

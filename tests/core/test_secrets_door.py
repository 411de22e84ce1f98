"""The one door for what Cairn keeps outside memory (`shell.secrets.door`): text redacted
however it comes in pieces, files 0600 in 0700 folders whatever was there before, a command's
kept output redacted as it is spooled and bounded in all, and a commit's subject redacted
before it is cut."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from shell.events import CommandOutput, DreamProposed, Event
from shell.secrets.door import Redactor, open_private, private_folder, redacted, write_private
from shell.tools.project.capture import HEAD_BYTES, TAIL_BYTES, Capture
from shell.tools.project.outputs import OutputStore
from tests.conftest import Clock
from tests.core.dreams import FOUR, TODAY, WINDOW, DreamWorld, of

GITHUB = "ghp_" + "R8x2" * 9
AWS_KEY = "AKIAJ7Q2WXYZ4PLANTED"
PASSWORD = "s3cr3tP4ss"
KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA0planted\nbody0planted\n"
    "-----END RSA PRIVATE KEY-----"
)
OUTPUT = (
    f"GITHUB_TOKEN={GITHUB}\nAWS_ACCESS_KEY_ID={AWS_KEY}\n"
    f"DATABASE_URL=postgres://admin:{PASSWORD}@db:5432/app\n{KEY}\nafter the key\n"
)
PLANTED = (GITHUB, AWS_KEY, PASSWORD, "MIIEpAIBAAKCAQEA0planted", "body0planted")


def mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


@pytest.mark.parametrize("size", [1, 3, 17, 64, 10_000])
def test_text_in_pieces_is_redacted_as_the_whole_is(size: int) -> None:
    redactor = Redactor()
    pieces = [OUTPUT[at : at + size] for at in range(0, len(OUTPUT), size)]

    kept = "".join(redactor.feed(piece) for piece in pieces) + redactor.close()

    assert kept == redacted(OUTPUT)
    assert not [secret for secret in PLANTED if secret in kept]
    assert "[REDACTED Private Key]\nafter the key" in kept


def test_a_line_that_never_ends_is_redacted_once_it_is_long(tmp_path: Path) -> None:
    redactor = Redactor()

    first = redactor.feed(f"{GITHUB} " + "x" * 70_000)

    assert first.startswith("[REDACTED GitHub Token] x")  # not held back for ever


def test_folders_under_cairn_are_0700_and_files_0600_whatever_was_there(tmp_path: Path) -> None:
    state = tmp_path / "ws" / ".cairn"
    state.mkdir(parents=True, mode=0o755)
    os.chmod(state, 0o755)
    old = state / "outputs" / "old.txt"
    old.parent.mkdir(mode=0o755)
    old.write_text("kept", encoding="utf-8")
    os.chmod(old, 0o644)

    private_folder(state / "outputs" / "deep")
    with open_private(old, "ab") as handle:
        handle.write(b" more")
    write_private(state / "sessions" / "s.json", "{}")

    assert [mode(p) for p in (state, state / "outputs", state / "outputs" / "deep")] == [0o700] * 3
    assert mode(tmp_path / "ws") != 0o700  # above .cairn: not Cairn's to change
    assert (mode(old), old.read_text()) == (0o600, "kept more")
    assert (mode(state / "sessions"), mode(state / "sessions" / "s.json")) == (0o700, 0o600)


async def test_a_spool_keeps_the_output_redacted_and_its_odd_bytes_as_they_came(
    tmp_path: Path,
) -> None:
    outputs = OutputStore(tmp_path / ".cairn" / "outputs")
    spool = outputs.spool("c1")
    data = OUTPUT.encode() + b"\xff\xfe raw \xe2\x82"  # not UTF-8, and a character cut short
    for at in range(0, len(data), 5):
        spool.write(data[at : at + 5])
    await asyncio.wrap_future(spool.close())

    kept = outputs.find("output:c1")
    assert not [secret for secret in PLANTED if secret.encode() in kept.read_bytes()]
    assert kept.read_bytes().endswith(b"after the key\n\xff\xfe raw \xe2\x82")
    assert (mode(kept), mode(kept.parent)) == (0o600, 0o700)
    window = outputs.read("output:c1", 1, 100, 10_000)
    assert "[REDACTED GitHub Token]" in window.text and GITHUB not in window.text


def test_kept_outputs_are_bounded_in_all_the_newest_kept(tmp_path: Path) -> None:
    outputs = OutputStore(tmp_path / "outputs")
    for n in range(5):
        outputs.keep(f"c{n}", "x" * 1000)
        os.utime(outputs.find(f"output:c{n}"), (n, n))

    outputs.prune(max_bytes=2500)

    assert sorted(p.name for p in outputs.folder.glob("*.txt")) == ["c3.txt", "c4.txt"]


def test_kept_results_are_redacted(tmp_path: Path) -> None:
    outputs = OutputStore(tmp_path / "outputs")

    ref = outputs.keep("c1", OUTPUT)

    assert GITHUB not in outputs.find(ref).read_text(encoding="utf-8", errors="replace")


def messages(root: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(root), "log", "--all", "--format=%B"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


class _Nowhere:
    def write(self, chunk: bytes) -> None:
        pass


def test_the_card_is_not_sent_a_token_in_two_halves() -> None:
    events: list[Event] = []
    capture = Capture(_Nowhere(), events.append, "c1")  # type: ignore[arg-type]

    capture.feed(f"line one\nGITHUB_TOKEN={GITHUB[:20]}".encode())
    capture.feed(f"{GITHUB[20:]}\n".encode())
    capture.flush()

    texts = [event.text for event in events if isinstance(event, CommandOutput)]
    assert texts == ["line one\n", f"GITHUB_TOKEN={GITHUB}\n"]


def test_the_result_is_cut_at_line_ends_not_through_a_token() -> None:
    capture = Capture(_Nowhere(), lambda event: None, "c1")  # type: ignore[arg-type]
    line = f"GITHUB_TOKEN={GITHUB}\n".encode()
    head = b"x" * (HEAD_BYTES - 20) + b"\n" + line  # the head's end is in the token
    tail = line + b"z\n" * ((TAIL_BYTES - 20) // 2)  # and so is the tail's start
    capture.feed(head + b"y\n" * TAIL_BYTES + tail)

    text, cut = capture.result_text("output:c1")

    assert cut and "ghp_" not in text and "GITHUB_TOKEN" not in text


async def test_a_dream_commit_subject_carries_no_part_of_a_token(
    tmp_path: Path, clock: Clock
) -> None:
    dream = DreamWorld(tmp_path / "ws", clock)
    dream.note(TODAY, "- Tom takes his coffee black")
    dream.recalled(f"memory/{TODAY}.md", 1, FOUR, score=0.62)
    (event,) = of(await dream.sweep(), DreamProposed)

    dream.dreamer.accept(
        event.proposal.id, f"The release bot signs in with {GITHUB} each Friday", window=WINDOW
    )

    log = messages(dream.root)
    assert "ghp_" not in log and "[REDACTED GitHub Token]" in log
    state = (dream.root / ".cairn" / "dreams" / "proposals.json").read_text(encoding="utf-8")
    assert "ghp_" not in state

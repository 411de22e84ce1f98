"""A dream acceptance is whole or nothing: an editor that saves MEMORY.md while the acceptance
writes never leaves DREAMS.md saying "accepted" over a MEMORY.md without the line."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from shell.events import Error, ProposalAccepted
from shell.memory.files import swap
from tests.conftest import Clock
from tests.core.dreams import TODAY, WINDOW, of
from tests.core.test_dream_review import proposed


def editor_saves(monkeypatch: pytest.MonkeyPatch, root: Path, times: int) -> Callable[[], int]:
    """An editor that saves MEMORY.md just before Cairn swaps its bytes, `times` times: after
    Cairn read it and after DREAMS.md was written, the narrowest window there is."""
    real = swap.replace_if_unchanged
    saves = 0

    def racing(path: Path, expected: bytes, data: bytes) -> bool:
        nonlocal saves
        if path.name == "MEMORY.md" and saves < times:
            saves += 1
            with path.open("a", encoding="utf-8") as editor:
                editor.write(f"- Typed in the editor, save {saves}\n")
        return real(path, expected, data)

    monkeypatch.setattr(swap, "replace_if_unchanged", racing)
    return lambda: saves


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    ).stdout


async def test_an_editor_saving_meanwhile_is_kept_and_the_accept_retried(
    tmp_path: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    dream, proposal_id = await proposed(tmp_path, clock)
    editor_saves(monkeypatch, dream.root, times=1)
    (accepted,) = of(dream.dreamer.accept(proposal_id, window=WINDOW), ProposalAccepted)

    memory = (dream.root / "MEMORY.md").read_text()
    assert "- Typed in the editor, save 1\n" in memory
    assert f"- Tom takes his coffee black. — Source: memory/{TODAY}.md#L1" in memory
    assert f"**{proposal_id}** · add · accepted" in (dream.root / "DREAMS.md").read_text()
    assert git(dream.root, "status", "--porcelain") == ""
    subjects = git(dream.root, "log", "-2", "--format=%s").splitlines()
    assert subjects[1] == "edit made outside Cairn: MEMORY.md"
    assert subjects[0].startswith(f"memory(dream): accept {proposal_id}")
    assert accepted.commit == git(dream.root, "rev-parse", "HEAD").strip()


async def test_an_editor_that_keeps_saving_gets_a_refusal_and_no_half_acceptance(
    tmp_path: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    dream, proposal_id = await proposed(tmp_path, clock)
    diary = (dream.root / "DREAMS.md").read_text()
    saves = editor_saves(monkeypatch, dream.root, times=99)
    (error,) = dream.dreamer.accept(proposal_id, window=WINDOW)

    assert isinstance(error, Error) and "not accepted" in error.message
    assert saves() == 3
    assert (dream.root / "DREAMS.md").read_text() == diary
    assert "Tom takes his coffee black" not in (dream.root / "MEMORY.md").read_text()
    assert [p.proposal.id for p in dream.dreamer.open_proposals(window=WINDOW)] == [proposal_id]
    # nothing of the acceptance is left to be committed later as anyone's
    assert git(dream.root, "status", "--porcelain").split() == ["M", "MEMORY.md"]


async def test_a_write_that_fails_midway_puts_back_what_it_wrote(
    tmp_path: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    dream, proposal_id = await proposed(tmp_path, clock)
    diary = (dream.root / "DREAMS.md").read_text()
    real = swap.replace_if_unchanged

    def full(path: Path, expected: bytes, data: bytes) -> bool:
        if path.name == "MEMORY.md":
            raise OSError(28, "No space left on device")
        return real(path, expected, data)

    monkeypatch.setattr(swap, "replace_if_unchanged", full)
    with pytest.raises(OSError):
        dream.dreamer.accept(proposal_id, window=WINDOW)
    assert (dream.root / "DREAMS.md").read_text() == diary
    assert [p.proposal.id for p in dream.dreamer.open_proposals(window=WINDOW)] == [proposal_id]

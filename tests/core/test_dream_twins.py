"""One proposal per note and fact: a note that supersedes a MEMORY.md line and is recalled
often enough to be added is proposed once, as the update; and accepting a proposal whose line
MEMORY.md already holds adds nothing."""

from __future__ import annotations

from pathlib import Path

from shell.events import DreamProposed, MemoryWritten, ProposalAccepted
from tests.conftest import Clock
from tests.core.dreams import WINDOW, DreamWorld, days_before, of

LATTES = [
    "how does Tom take his coffee now?",
    "Tom's coffee order?",
    "what does Tom drink?",
    "oat or dairy for Tom?",
]


def supersede(dream: DreamWorld, clock: Clock) -> str:
    last_week, yesterday = days_before(clock, 7, 1)
    dream.memory("- Tom takes his coffee black", "- The office is in Oslo", day=last_week)
    path = dream.note(yesterday, "- Tom switched to oat lattes")
    dream.recalled(path, 1, LATTES, days=[yesterday], score=0.7)
    return path


async def test_a_note_both_recalled_and_superseding_is_one_update(
    tmp_path: Path, clock: Clock
) -> None:
    dream = DreamWorld(tmp_path / "ws", clock, embedder="minilm")
    supersede(dream, clock)
    (event,) = of(await dream.sweep(), DreamProposed)
    assert event.proposal.kind == "update"
    dream.dreamer.accept(event.proposal.id, window=WINDOW)
    memory = (dream.root / "MEMORY.md").read_text()
    assert memory.count("Tom switched to oat lattes") == 1
    assert "Tom takes his coffee black" not in memory
    clock.advance(days=1)
    assert not of(await dream.sweep(), DreamProposed)


async def test_an_update_replaces_the_twin_add_a_former_sweep_left_open(
    tmp_path: Path, clock: Clock
) -> None:
    dream = DreamWorld(tmp_path / "ws", clock, embedder="minilm")
    last_week, yesterday = days_before(clock, 7, 1)
    dream.memory("- The office is in Oslo", day=last_week)
    path = dream.note(yesterday, "- Tom switched to oat lattes")
    dream.recalled(path, 1, LATTES, days=[yesterday], score=0.7)
    (first,) = of(await dream.sweep(), DreamProposed)
    assert first.proposal.kind == "add"

    dream.memory("- Tom takes his coffee black", "- The office is in Oslo", day=last_week)
    clock.advance(hours=1)
    (second,) = of(await dream.sweep(), DreamProposed)
    assert second.proposal.kind == "update"
    assert [p.proposal.id for p in dream.dreamer.open_proposals(window=WINDOW)] == [
        second.proposal.id
    ]


async def test_accepting_a_line_memory_already_holds_adds_nothing(
    tmp_path: Path, clock: Clock
) -> None:
    dream = DreamWorld(tmp_path / "ws", clock, embedder="minilm")
    last_week, yesterday = days_before(clock, 7, 1)
    dream.memory("- The office is in Oslo", day=last_week)
    path = dream.note(yesterday, "- Tom switched to oat lattes")
    dream.recalled(path, 1, LATTES, days=[yesterday], score=0.7)
    (event,) = of(await dream.sweep(), DreamProposed)
    dream.memory("- The office is in Oslo", "- Tom switched to oat lattes.")  # by hand since

    events = dream.dreamer.accept(event.proposal.id, window=WINDOW)
    (accepted,) = of(events, ProposalAccepted)
    assert [e.path for e in of(events, MemoryWritten)] == ["DREAMS.md"]
    memory = (dream.root / "MEMORY.md").read_text()
    assert memory.count("Tom switched to oat lattes") == 1
    assert f"**{accepted.proposal.id}** · add · accepted" in (dream.root / "DREAMS.md").read_text()

"""Deciding on proposals: accept, edit and reject give exactly the expected commits; a rejected
proposal does not return; an acceptance never touches another MEMORY.md line, and says so
before MEMORY.md would outgrow its share of the prompt."""

from __future__ import annotations

import subprocess
from pathlib import Path

from shell.events import (
    DeepSleepFinished,
    DreamProposed,
    Error,
    MemoryWritten,
    ProposalAccepted,
    ProposalRejected,
    Stopped,
)
from tests.conftest import Clock
from tests.core.dreams import FOUR, TODAY, WINDOW, DreamWorld, days_before, of


async def proposed(tmp_path: Path, clock: Clock, **kwargs: object) -> tuple[DreamWorld, str]:
    dream = DreamWorld(tmp_path / "ws", clock, **kwargs)  # type: ignore[arg-type]
    dream.memory("- The office is in Oslo")
    dream.note(TODAY, "- Tom takes his coffee black")
    dream.recalled(f"memory/{TODAY}.md", 1, FOUR, score=0.62)
    (event,) = of(await dream.sweep(), DreamProposed)
    return dream, event.proposal.id


def show(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    ).stdout


async def test_accepting_adds_one_line_under_a_dated_heading_in_one_commit(
    tmp_path: Path, clock: Clock
) -> None:
    dream, proposal_id = await proposed(tmp_path, clock)
    head = show(dream.root, "rev-parse", "HEAD").strip()
    events = dream.dreamer.accept(proposal_id, window=WINDOW)

    (accepted,) = of(events, ProposalAccepted)
    assert (accepted.text, accepted.edited, accepted.open) == (
        "Tom takes his coffee black.",
        False,
        0,
    )
    assert [e.path for e in of(events, MemoryWritten)] == ["DREAMS.md", "MEMORY.md"]
    assert show(dream.root, "rev-list", "--count", f"{head}..HEAD").strip() == "1"
    message = show(dream.root, "log", "-1", "--format=%B")
    assert message.splitlines()[0] == (
        f"memory(dream): accept {proposal_id} “Tom takes his coffee black.” "
        f"from memory/{TODAY}.md#L1"
    )
    assert "recalled 4 times by 4 different questions" in message
    diff = show(dream.root, "show", "--format=", "--unified=0", "HEAD", "--", "MEMORY.md")
    added = [
        line for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")
    ]
    removed = [
        line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")
    ]
    assert added == [
        "+",
        f"+## Promoted {TODAY}",
        f"+- Tom takes his coffee black. — Source: memory/{TODAY}.md#L1",
    ]
    assert removed == []
    assert f"**{proposal_id}** · add · accepted" in (dream.root / "DREAMS.md").read_text()
    assert dream.dreamer.open_proposals(window=WINDOW) == []


async def test_a_second_acceptance_the_same_day_adds_exactly_one_line(
    tmp_path: Path, clock: Clock
) -> None:
    dream, first = await proposed(tmp_path, clock)
    dream.dreamer.accept(first, window=WINDOW)
    dream.note(TODAY, "- Priya leads the billing migration")
    dream.recalled(f"memory/{TODAY}.md", 2, ["who leads billing?", "billing lead", "Priya?"])
    (event,) = of(await dream.sweep(), DreamProposed)
    before = (dream.root / "MEMORY.md").read_text().splitlines()
    dream.dreamer.accept(event.proposal.id, window=WINDOW)
    after = (dream.root / "MEMORY.md").read_text().splitlines()
    assert len(after) == len(before) + 1
    assert after[-1].startswith("- Priya leads the billing migration. — Source:")
    assert after.count(f"## Promoted {TODAY}") == 1


async def test_an_edited_acceptance_writes_the_persons_words(tmp_path: Path, clock: Clock) -> None:
    dream, proposal_id = await proposed(tmp_path, clock)
    events = dream.dreamer.accept(proposal_id, "Tom: black coffee,\n no sugar", window=WINDOW)
    (accepted,) = of(events, ProposalAccepted)
    assert (accepted.text, accepted.edited) == ("Tom: black coffee, no sugar", True)
    memory = (dream.root / "MEMORY.md").read_text()
    assert f"- Tom: black coffee, no sugar — Source: memory/{TODAY}.md#L1\n" in memory
    assert "Tom takes his coffee black" not in memory


async def test_a_rejection_is_one_commit_of_dreams_md_and_does_not_come_back(
    tmp_path: Path, clock: Clock
) -> None:
    dream, proposal_id = await proposed(tmp_path, clock)
    memory = (dream.root / "MEMORY.md").read_text()
    events = dream.dreamer.reject(proposal_id)
    (rejected,) = of(events, ProposalRejected)
    assert rejected.commit and rejected.open == 0
    assert show(dream.root, "show", "--format=", "--name-only", "HEAD").split() == ["DREAMS.md"]
    assert (dream.root / "MEMORY.md").read_text() == memory
    assert f"**{proposal_id}** · add · rejected" in (dream.root / "DREAMS.md").read_text()

    clock.advance(days=1)
    dream.recalled(f"memory/{TODAY}.md", 1, ["Tom coffee?", "his coffee", "coffee Tom?"])
    events = await dream.sweep()
    assert not of(events, DreamProposed)
    (deep,) = of(events, DeepSleepFinished)
    assert Stopped("rejected", 1) in deep.stopped

    # the same words in another note are the same proposal: remembered by content
    path = dream.note(clock.now.date().isoformat(), "- Tom takes his coffee black.")
    dream.recalled(path, 1, FOUR)
    assert not of(await dream.sweep(), DreamProposed)


async def test_accepting_an_update_replaces_exactly_its_line(tmp_path: Path, clock: Clock) -> None:
    dream = DreamWorld(tmp_path / "ws", clock, embedder="minilm")
    last_week, yesterday = days_before(clock, 7, 1)
    dream.memory("- Tom takes his coffee black", "- The office is in Oslo", day=last_week)
    dream.note(yesterday, "- Tom switched to oat lattes")
    (event,) = of(await dream.sweep(), DreamProposed)
    dream.dreamer.accept(event.proposal.id, window=WINDOW)
    assert (dream.root / "MEMORY.md").read_text() == (
        "# MEMORY.md\n\n"
        f"- Tom switched to oat lattes. — Source: memory/{yesterday}.md#L1\n"
        "- The office is in Oslo\n"
    )


async def test_an_update_whose_line_changed_meanwhile_is_stale_and_writes_nothing(
    tmp_path: Path, clock: Clock
) -> None:
    dream = DreamWorld(tmp_path / "ws", clock, embedder="minilm")
    last_week, yesterday = days_before(clock, 7, 1)
    dream.memory("- Tom takes his coffee black", day=last_week)
    dream.note(yesterday, "- Tom switched to oat lattes")
    (event,) = of(await dream.sweep(), DreamProposed)
    dream.memory("- Tom takes his coffee with a dash of milk")  # edited by hand since
    head = show(dream.root, "rev-parse", "HEAD")
    (error,) = dream.dreamer.accept(event.proposal.id, window=WINDOW)
    assert isinstance(error, Error)
    assert "no longer holds the line" in error.message
    assert show(dream.root, "rev-parse", "HEAD") == head
    (preview,) = dream.dreamer.open_proposals(window=WINDOW)
    assert preview.stale and not preview.diff


async def test_past_the_bootstrap_budget_it_says_so_first(tmp_path: Path, clock: Clock) -> None:
    dream, proposal_id = await proposed(tmp_path, clock)
    window = 2048  # MEMORY.md's share: what AGENTS.md and SOUL.md leave of 2,048 characters
    budget = dream.dreamer.budget("", window).budget
    filler = "x" * (budget - len("# MEMORY.md\n\n- The office is in Oslo") - 20)
    dream.memory("- The office is in Oslo", f"- {filler}")
    (preview,) = dream.dreamer.open_proposals(window=window)
    assert preview.budget.over and preview.budget.budget == budget
    head = show(dream.root, "rev-parse", "HEAD")
    (error,) = dream.dreamer.accept(proposal_id, window=window)
    assert isinstance(error, Error) and "over its" in error.message
    assert show(dream.root, "rev-parse", "HEAD") == head
    (accepted,) = of(
        dream.dreamer.accept(proposal_id, window=window, over_budget=True), ProposalAccepted
    )
    assert accepted.budget.over


async def test_deciding_on_what_is_not_open_is_a_clear_error(tmp_path: Path, clock: Clock) -> None:
    dream, proposal_id = await proposed(tmp_path, clock)
    (unknown,) = dream.dreamer.reject("d-000000")
    assert isinstance(unknown, Error) and "no proposal 'd-000000'" in unknown.message
    dream.dreamer.reject(proposal_id)
    (twice,) = dream.dreamer.accept(proposal_id, window=WINDOW)
    assert (
        isinstance(twice, Error)
        and twice.message == f"proposal {proposal_id} is rejected, not open"
    )

"""Provenance across machines: a line machine b wrote, merged into machine a's note by a sync,
traces on a to b's commit (its session and turn, its machine), not to the merge; a has no such
session, which is said."""

from __future__ import annotations

from shell.events.sync import SyncFinished
from shell.memory.files.door import MemoryFiles
from shell.why import Why
from tests.sync.conftest import Machine

DAY = "memory/2026-11-30.md"


def test_a_line_merged_from_another_machine_traces_to_its_write_there(
    pair: tuple[Machine, Machine],
) -> None:
    a, b = pair
    a.append(DAY, "- from a: the deploy is on Friday")
    session = "20261130-090000-bbbbbb"
    MemoryFiles(b.root, b.store).append(
        DAY, "- from b: Ana owns the release", reason="tool", origin=f"session {session} turn 4"
    )
    written_on_b = b.head()
    assert isinstance(a.engine.sync()[-1], SyncFinished)
    assert isinstance(b.engine.sync()[-1], SyncFinished)  # b merges a's line, pushes the merge
    assert isinstance(a.engine.sync()[-1], SyncFinished)
    lines = a.text(DAY).splitlines()
    number = lines.index("- from b: Ana owns the release") + 1

    traced = Why(a.store, a.root / ".cairn").line(DAY, number)

    (step,) = traced.provenance.steps
    assert step.commit.sha == written_on_b and step.commit.kind == "tool"
    assert (step.commit.session, step.commit.turn, step.commit.machine) == (
        session,
        4,
        "example.org",
    )
    assert (
        traced.turn_missing == f"session {session} is not on this machine (sessions are not synced)"
    )

"""A sweep kept: its proposals opened in dreaming's state, and its block in DREAMS.md (one
commit; none when the latest block already says the same)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from shell.dreaming import diary
from shell.dreaming.state import Record, StateStore
from shell.events import DeepSleepFinished, Proposal
from shell.memory.files.door import DIARY_FILE, MemoryFiles
from shell.memory.files.values import Edit, WriteOutcome
from shell.workspace import SEEDS

if TYPE_CHECKING:
    from shell.dreaming.sweep import Plan


def save_sweep(
    store: StateStore,
    files: MemoryFiles,
    sweep: str,
    now: datetime,
    plan: Plan,
    deep: DeepSleepFinished,
    proposals: list[Proposal],
) -> tuple[list[WriteOutcome], str, int]:
    """The writes made, the diary entry, and how many proposals are open now."""
    phases = (plan.light.event, plan.rem.event, deep)
    entry = diary.diary_entry(*phases, proposals)
    with store.editing() as state:
        for proposal in proposals:
            state.records[proposal.id] = Record(
                proposal, "open", now.isoformat(), keys=plan.keys[proposal.id]
            )
        for twin in plan.replaced & state.records.keys():
            state.records[twin] = replace(state.records[twin], status="stale")
        new = {proposal.id for proposal in proposals}
        still_open = [r.proposal.id for r in state.open() if r.proposal.id not in new]
        block = diary.render_block(sweep, now, entry, phases, proposals, still_open)
        state.remember("dreamed", *diary.prose_lines(block))
        open_count = len(state.open())
    on_disk = files.text(DIARY_FILE)
    current = on_disk or SEEDS[DIARY_FILE]
    if diary.latest_digest(current) == diary.digest(phases, [*new, *still_open]):
        return [], entry, open_count
    proposed = f"{len(proposals)} proposed" if proposals else "nothing proposed"
    written = files.rewrite(
        [Edit(DIARY_FILE, on_disk, diary.splice(current, block))],
        reason="dream",
        summary=f"sweep {now:%Y-%m-%d %H:%M}, {proposed}",
    )
    return written, entry, open_count

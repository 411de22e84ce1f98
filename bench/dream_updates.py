"""Updates for `bench.dream --real`: MEMORY.md facts that later notes change, and facts they don't.

A planted scenario in its own workspace, in the bench's own words (not LoCoMo's). MEMORY.md holds
twenty facts, committed 45 days before the bench's NOW; then one short daily note a day, each
committed on its day:
- ten notes truly change a fact ("Kari lives in Oslo." / "Kari moved from Oslo to Bergen in
  March."), in the phrasings people use: moved, switched, now works at, sold and bought,
  renamed, no longer, quit, changed;
- ten notes name the person of a fact that stays true, with a word that often signals a change
  ("started", "now", "new", "since", "joined") about something else ("Kari started pottery
  classes on Thursdays.").

Each changing note is also asked about by three questions through `memory_search`, on the last
three days, so it could become an add as well: an update and an add of the same note (its twin)
would write it twice. One sweep without a model; its per-sweep cap is raised for this scenario
(`LIMIT`) so the count measures what is found, not the cap.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from bench.dream_setup import NOW
from bench.dream_world import make_world
from shell.events import Proposal
from shell.memory.paths import daily_note


@dataclass(frozen=True)
class Change:
    line: str
    """The MEMORY.md fact."""
    note: str
    """The later note that changes it."""
    questions: tuple[str, str, str]


CHANGED = (
    Change(
        "Kari lives in Oslo.",
        "Kari moved from Oslo to Bergen in March.",
        ("Where does Kari live?", "Which city is Kari in these days?", "Kari home town"),
    ),
    Change(
        "Tom takes his coffee black.",
        "Tom switched to oat milk lattes.",
        ("How does Tom take his coffee?", "What does Tom order at the café?", "Tom coffee"),
    ),
    Change(
        "Anders works at Telenor.",
        "Anders now works at Equinor as a data engineer.",
        ("Where does Anders work?", "Who employs Anders?", "Anders job"),
    ),
    Change(
        "Lena drives a red Volvo.",
        "Lena sold her Volvo and bought an electric cargo bike.",
        ("What does Lena drive?", "How does Lena get around town?", "Lena car"),
    ),
    Change(
        "Our team channel is #platform-core.",
        "The #platform-core channel was renamed to #infra.",
        ("What is our team channel called?", "Which chat channel does the team use?", "team chat"),
    ),
    Change(
        "Marta is vegetarian.",
        "Marta is no longer vegetarian; she eats fish again.",
        ("Does Marta eat fish?", "What can I cook for Marta?", "Marta diet"),
    ),
    Change(
        "Jonas plays bass in a jazz trio.",
        "Jonas quit the jazz trio and plays drums in a rock band.",
        ("What instrument does Jonas play?", "Which band is Jonas in?", "Jonas music"),
    ),
    Change(
        "The weekly planning meeting is on Monday at 09:30.",
        "The weekly planning meeting changed to Tuesday at 10:00.",
        ("When is the weekly planning meeting?", "What day do we plan the week?", "planning"),
    ),
    Change(
        "Sofia reports to Erik.",
        "Sofia changed teams and reports to Hanna now.",
        ("Who is Sofia's manager?", "Who does Sofia report to?", "Sofia boss"),
    ),
    Change(
        "Pia rents a flat in Grünerløkka.",
        "Pia bought a house in Asker.",
        ("Where does Pia live?", "Does Pia rent or own her home?", "Pia home"),
    ),
)
STILL_TRUE = (
    ("Kari's daughter is called Ingrid.", "Kari started pottery classes on Thursdays."),
    ("Tom is allergic to peanuts.", "Tom joined a climbing gym near the office."),
    ("Anders has two cats, Mons and Pus.", "Anders started learning Spanish."),
    ("Lena's birthday is on 14 May.", "Lena has a new haircut, very short."),
    ("Marta speaks Portuguese and Norwegian.", "Marta now runs to work three days a week."),
    ("Jonas studied physics in Trondheim.", "Jonas started a new podcast about chess openings."),
    ("Erik is the on-call lead for payments.", "Erik joined the company choir."),
    ("Hanna prefers tea to coffee.", "Hanna has been sailing every weekend since June."),
    ("Ola is afraid of flying.", "Ola now cycles to work on his new bike."),
    ("Nora's partner is called Sam.", "Nora started a new job at the city library."),
)
MEMORY_AGE_DAYS = 45
LIMIT = 40


def _bullet(text: str) -> str:
    return f"- {text}"


def _bare(line: str) -> str:
    return line.strip().removeprefix("- ").strip()


def run_updates() -> dict[str, Any]:
    """The scenario, one sweep, and what it proposed (the texts are the bench's own)."""
    with tempfile.TemporaryDirectory(prefix="cairn-dream-updates-") as tmp:
        world = make_world(Path(tmp) / "ws", NOW - timedelta(days=MEMORY_AGE_DAYS + 1), limit=LIMIT)
        try:
            memory = ["# MEMORY.md — curated long-term memory", ""]
            memory += [_bullet(c.line) for c in CHANGED] + [_bullet(t) for t, _ in STILL_TRUE]
            world.commit_note(
                "MEMORY.md", memory, NOW - timedelta(days=MEMORY_AGE_DAYS), "bench: memory"
            )
            where: dict[tuple[str, int], str] = {}
            notes = [
                text
                for change, (_, decoy) in zip(CHANGED, STILL_TRUE, strict=True)
                for text in (change.note, decoy)
            ]
            for age, text in zip(range(len(notes) + 1, 1, -1), notes, strict=True):
                at = NOW - timedelta(days=age, hours=8)
                path = daily_note(at.date())
                world.commit_note(path, ["## 10:00", _bullet(text)], at, "bench: a note")
                where[(path, 2)] = text
            world.index()
            schedule: list[tuple[datetime, str]] = []
            for index, change in enumerate(CHANGED):
                for day, question in zip((2, 1, 0), change.questions, strict=True):
                    schedule.append((NOW - timedelta(days=day, hours=8, minutes=-index), question))
            world.ask(sorted(schedule))
            world.clock.now = NOW
            swept = world.sweep()
        finally:
            world.close()
    return _judged(swept.proposals, where, swept.seconds)


def _judged(
    proposals: list[Proposal], where: dict[tuple[str, int], str], seconds: float
) -> dict[str, Any]:
    changes = {c.line: c.note for c in CHANGED}
    true_lines = {line for line, _ in STILL_TRUE}
    updates = [p for p in proposals if p.kind == "update"]
    adds = [p for p in proposals if p.kind == "add"]

    def note_of(proposal: Proposal) -> str | None:
        return next(
            (
                where[(s.path, line)]
                for s in proposal.sources
                for line in range(s.start_line, s.end_line + 1)
                if (s.path, line) in where
            ),
            None,
        )

    right: list[tuple[str, str | None]] = []
    wrong: list[tuple[str, str | None]] = []
    false: list[tuple[str, str | None]] = []
    other: list[tuple[str, str | None]] = []
    for update in updates:
        old, note = _bare(update.replaces or ""), note_of(update)
        if old in changes:
            (right if changes[old] == note else wrong).append((old, note))
        elif old in true_lines:
            false.append((old, note))
        else:
            other.append((old, note))
    updated_notes = {
        (s.path, s.start_line) for u in updates for s in u.sources if s.path != "MEMORY.md"
    }
    twins = [a for a in adds if any((s.path, s.start_line) in updated_notes for s in a.sources)]
    found = {old for old, _ in right}
    return {
        "changes": len(CHANGED),
        "changes_updated": len(found),
        "changes_missed": [c.line for c in CHANGED if c.line not in found],
        "changes_wrong_note": [{"line": o, "note": n} for o, n in wrong],
        "still_true": len(STILL_TRUE),
        "false_updates": len(false),
        "false_updated": [{"line": o, "note": n} for o, n in false],
        "other_updates": [{"line": o, "note": n} for o, n in other],
        "updates": len(updates),
        "adds": len(adds),
        "twins": len(twins),
        "sweep_s": round(seconds, 2),
    }
